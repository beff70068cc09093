"""The os-server-groups resource: affinity and anti-affinity groups of servers."""

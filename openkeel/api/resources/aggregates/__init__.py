"""The os-aggregates resource: host aggregates, their hosts, metadata and zones (admin)."""

"""os-instance_usage_audit_log: progress of the compute hosts' usage audit per period."""

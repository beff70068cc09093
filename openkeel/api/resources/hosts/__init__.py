"""os-hosts (deprecated, up to 2.42): hosts, their resources and host-level actions."""

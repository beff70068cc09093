"""``/os-availability-zone``: the zones of compute hosts, summary and detail."""

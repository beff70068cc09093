"""The ``os-volumes`` proxy (up to 2.35)."""

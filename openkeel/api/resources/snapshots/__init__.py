"""The ``os-snapshots`` proxy (up to 2.35)."""

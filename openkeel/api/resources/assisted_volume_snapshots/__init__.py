"""``/os-assisted-volume-snapshots``: Cinder asks the compute host to snapshot a file-based
volume attached to a server (admin or service)."""

"""``/os-hypervisors``: compute nodes with their service state, statistics and servers."""

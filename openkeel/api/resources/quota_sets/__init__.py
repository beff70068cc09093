"""``/os-quota-sets``: per-project and per-user quota limits."""

"""os-admin-actions: ``os-resetState`` and ``injectNetworkInfo`` (``resetNetwork`` is gone: see
the removed resource)."""

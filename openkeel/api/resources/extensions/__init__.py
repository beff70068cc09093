"""``GET /extensions`` and ``GET /extensions/{alias}``: Nova's frozen legacy extension list."""

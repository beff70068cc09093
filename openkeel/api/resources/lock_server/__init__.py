"""os-lock-server: the ``lock`` (2.73: with ``locked_reason``) and ``unlock`` server actions."""

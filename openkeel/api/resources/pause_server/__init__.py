"""os-pause-server: the ``pause`` and ``unpause`` server actions."""

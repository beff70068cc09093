"""os-rescue: the ``rescue`` and ``unrescue`` server actions."""

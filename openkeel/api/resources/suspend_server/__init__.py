"""os-suspend-server: the ``suspend`` and ``resume`` server actions."""

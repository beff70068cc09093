"""``/os-quota-class-sets``: limits of quota classes (``default`` applies to every project)."""

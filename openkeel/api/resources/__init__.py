"""API resources: one package per resource, each with ``routes.py`` exposing
``register(table: RouteTable) -> None``. The factory discovers them; no central list."""

"""Nova's routes that OpenKeel does not serve yet: they answer 501 ``notImplemented``.

A client calling an API that Nova 34 has but this deployment does not build yet gets Nova's
answer for a missing feature (``common.raise_feature_not_supported``: 501, "The requested
functionality is not supported.") inside Nova's microversion window of that route, and Nova's
404 outside it, instead of the 404 of a path that does not exist (decision 0027). Registered
last by ``factory.build_routes``; a route or action that a resource registers for real takes
precedence, so building one needs no change here (the meta-test
tests/api/test_unbuilt_routes.py reports the rows to delete). Rows: Nova's route inventory
(shared/spec/api-routes.md §1 and §2): method or action, path, first and last microversion.
"""

from __future__ import annotations

from openkeel.api.routing import RouteTable

ROUTES: tuple[tuple[str, str, str, str], ...] = (
    # baremetal_nodes
    ("GET", "/os-baremetal-nodes", "2.1", "2.35"),
    ("POST", "/os-baremetal-nodes", "2.1", "2.35"),
    ("GET", "/os-baremetal-nodes/{id}", "2.1", "2.35"),
    ("DELETE", "/os-baremetal-nodes/{id}", "2.1", "2.35"),
    # simple_tenant_usage
    # server_shares
    ("GET", "/servers/{server_id}/shares", "2.97", "2.104"),
    ("POST", "/servers/{server_id}/shares", "2.97", "2.104"),
    ("GET", "/servers/{server_id}/shares/{id}", "2.97", "2.104"),
    ("DELETE", "/servers/{server_id}/shares/{id}", "2.97", "2.104"),
)
ACTIONS: tuple[tuple[str, str, str, str], ...] = (
    ("/os-baremetal-nodes/{id}/action", "add_interface", "2.1", "2.35"),
    ("/os-baremetal-nodes/{id}/action", "remove_interface", "2.1", "2.35"),
)


def register(table: RouteTable) -> None:
    """Register every row as a not-built endpoint of ``table``."""
    for method, template, since, until in ROUTES:
        table.not_built(method, template, since, until)
    for template, key, since, until in ACTIONS:
        table.not_built_action(template, key, since, until)

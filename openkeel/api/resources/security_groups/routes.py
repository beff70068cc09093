"""Routes of a server's security groups, and the ``os-security-groups`` /
``os-security-group-rules`` proxies (2.1-2.35; 404 after, Nova's proxy cap)."""

from __future__ import annotations

from openkeel.api.resources.security_groups import handlers, handlers_proxy, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

ACTION = "/servers/{id}/action"
MAX_PROXY = "2.35"
GROUPS, GROUP, RULES = "/os-security-groups", "/os-security-groups/{id}", "/os-security-group-rules"
INDEX_QUERY = Versioned.of(("2.1", schemas.INDEX_QUERY_V21), ("2.102", schemas.INDEX_QUERY_V2102))


def register(table: RouteTable) -> None:
    table.add(
        "GET",
        "/servers/{server_id}/os-security-groups",
        endpoint(
            handlers.list_server_security_groups, query=INDEX_QUERY, policy=handlers.POLICY % "list"
        ),
    )
    table.add_action(
        ACTION,
        "addSecurityGroup",
        endpoint(handlers.add_security_group, status=202, body=Versioned.of(("2.1", schemas.ADD)),
                 policy=handlers.POLICY % "add"),
    )  # fmt: skip
    table.add_action(
        ACTION,
        "removeSecurityGroup",
        endpoint(handlers.remove_security_group, status=202,
                 body=Versioned.of(("2.1", schemas.REMOVE)), policy=handlers.POLICY % "remove"),
    )  # fmt: skip
    register_proxies(table)


def register_proxies(table: RouteTable) -> None:
    p, h, cap = handlers.POLICY, handlers_proxy, MAX_PROXY
    body = Versioned.of(("2.1", schemas.GROUP))
    index_query = Versioned.of(("2.1", schemas.PROXY_INDEX_QUERY))
    show_query = Versioned.of(("2.1", schemas.PROXY_SHOW_QUERY))
    table.add("GET", GROUPS, endpoint(h.list_security_groups, until=cap, query=index_query,
                                      policy=p % "get"))  # fmt: skip
    table.add("POST", GROUPS, endpoint(h.create_security_group, until=cap, body=body,
                                       policy=p % "create"))  # fmt: skip
    table.add("GET", GROUP, endpoint(h.show_security_group, until=cap, query=show_query,
                                     policy=p % "show"))  # fmt: skip
    table.add("PUT", GROUP, endpoint(h.update_security_group, until=cap, body=body,
                                     policy=p % "update"))  # fmt: skip
    table.add("DELETE", GROUP, endpoint(h.delete_security_group, status=202, until=cap,
                                        policy=p % "delete"))  # fmt: skip
    table.add("POST", RULES, endpoint(h.create_security_group_rule, until=cap,
                                      body=Versioned.of(("2.1", schemas.RULE)),
                                      policy=p % "rule:create"))  # fmt: skip
    table.add("DELETE", RULES + "/{id}", endpoint(h.delete_security_group_rule, status=202,
                                                  until=cap, policy=p % "rule:delete"))  # fmt: skip

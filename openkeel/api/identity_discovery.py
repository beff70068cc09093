"""Keystone version discovery and project look-up for the keystone-less all-in-one.

python-openstackclient insists on an identity v3 endpoint for some compute commands
(``flavor create``, ``server list``) and resolves project names for ``quota show PROJECT`` even
when nothing else needs Keystone. With noauth there is no Keystone, and a project is whatever
string the token names, so the all-in-one answers version discovery and ``GET
/identity/v3/projects[/<id>|?name=<name>]`` with a project whose id and name are that string.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

import orjson

from openkeel.api.app import Receive, Scope, Send

PREFIX = "/identity"


def _project(ident: str) -> dict[str, Any]:
    return {
        "id": ident,
        "name": ident,
        "domain_id": "default",
        "enabled": True,
        "is_domain": False,
        "parent_id": "default",
        "description": "",
        "tags": [],
        "links": {},
    }


def _document(base: str, path: str, query: str) -> tuple[int, dict[str, Any]]:
    v3 = {
        "id": "v3.14",
        "status": "stable",
        "updated": "2020-04-07T00:00:00Z",
        "links": [{"rel": "self", "href": f"{base}{PREFIX}/v3/"}],
        "media-types": [
            {"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}
        ],
    }
    if path.rstrip("/") == f"{PREFIX}/v3":
        return 200, {"version": v3}
    if path.rstrip("/") == PREFIX:
        return 300, {"versions": {"values": [v3]}}
    projects = f"{PREFIX}/v3/projects"
    if path.startswith(projects + "/"):
        return 200, {"project": _project(path[len(projects) + 1 :].strip("/"))}
    if path.rstrip("/") == projects:
        names = [v for k, v in parse_qsl(query) if k == "name"]
        return 200, {"projects": [_project(n) for n in names], "links": {}}
    return 404, {
        "error": {
            "code": 404,
            "title": "Not Found",
            "message": "Only identity version discovery is served here.",
        }
    }


class WithIdentityDiscovery:
    """ASGI wrapper: ``/identity...`` gets discovery documents, the rest goes to ``app``."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == PREFIX or path.startswith(PREFIX + "/")):
            await self.app(scope, receive, send)
            return
        host = dict(scope["headers"]).get(b"host", b"localhost").decode("latin-1")
        query = scope.get("query_string", b"").decode("latin-1")
        status, body = _document(f"{scope.get('scheme', 'http')}://{host}", path, query)
        payload = orjson.dumps(body)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})

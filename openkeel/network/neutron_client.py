"""The REST calls the Neutron adapter makes (Neutron's v2.0 API over a keystoneauth1 adapter).

The endpoint comes from the service catalog of the ``[neutron]`` service user's token (or
``endpoint_override``), found with Nova's ``[neutron]`` options: ``auth_type`` and the plugin's
options, the session options, ``region_name`` / ``valid_interfaces`` / ``endpoint_override``.
Plain keystoneauth1 REST rather than openstacksdk or python-neutronclient (decision 0056): the
adapter needs a dozen calls, keystoneauth1 is already a dependency, and Neutron's own error
bodies (``NeutronError.type``) stay visible to map them to Nova's errors.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

from keystoneauth1 import adapter as ksa_adapter
from keystoneauth1 import exceptions as ksa_exceptions
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

from openkeel.conf.keystoneauth import load_auth
from openkeel.conf.neutron import GROUP
from openkeel.domain.errors import ServiceUnavailable

Doc = dict[str, Any]
Query = Mapping[str, str | Sequence[str] | bool]


class NeutronUnavailable(ServiceUnavailable):
    """Neutron could not be reached, or answered with a server error."""


class NeutronFault(Exception):
    """Neutron refused a request: its HTTP status, ``NeutronError.type`` and message."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message


def load_adapter(conf: cfg.ConfigOpts) -> ksa_adapter.Adapter:
    """A keystoneauth1 adapter for the network service from ``[neutron]``."""
    auth = load_auth(conf, GROUP)
    session = ks_loading.load_session_from_conf_options(conf, GROUP, auth=auth)
    adapter: ksa_adapter.Adapter = ks_loading.load_adapter_from_conf_options(
        conf, GROUP, session=session, auth=auth
    )
    return adapter


class NeutronClient:
    """Neutron's v2.0 resources as dicts; errors as ``NeutronFault``/``NeutronUnavailable``."""

    def __init__(self, adapter: ksa_adapter.Adapter, retries: int = 3) -> None:
        self._adapter = adapter
        self._retries = retries

    def _call(self, method: str, path: str, body: Doc | None = None) -> Doc:
        try:
            resp = self._adapter.request(
                f"/v2.0/{path}", method, json=body, raise_exc=False,
                connect_retries=self._retries if method in ("GET", "DELETE") else 0,
            )  # fmt: skip
        except ksa_exceptions.ClientException as exc:
            raise NeutronUnavailable(f"Neutron not reachable: {exc}") from exc
        status = int(resp.status_code)
        resp.close()  # the body is read: the connection goes back to the pool
        if status >= 400:
            failure = _failure(resp, status, f"{method} {path}")
            # The response keeps its socket's file open: a traceback (a caller's kept
            # exception) must not keep the response.
            del resp
            raise failure
        if status == 204 or not resp.content:
            return {}
        out: Doc = resp.json()
        return out

    def list(self, collection: str, query: Query | None = None) -> list[Doc]:
        """GET /v2.0/<collection> with filters (a list value repeats the key: an OR)."""
        path = collection
        if query:
            pairs = [
                (key, _text(v))
                for key, values in query.items()
                for v in (values if isinstance(values, list | tuple) else [values])
            ]
            path += "?" + urllib.parse.urlencode(pairs)
        found: list[Doc] = self._call("GET", path)[_plural(collection)]
        return found

    def show(self, collection: str, ident: str) -> Doc:
        found: Doc = self._call("GET", f"{collection}/{ident}")[_singular(collection)]
        return found

    def create(self, collection: str, body: Doc) -> Doc:
        key = _singular(collection)
        made: Doc = self._call("POST", collection, {key: body})[key]
        return made

    def update(self, collection: str, ident: str, body: Doc) -> Doc:
        key = _singular(collection)
        made: Doc = self._call("PUT", f"{collection}/{ident}", {key: body})[key]
        return made

    def delete(self, collection: str, ident: str) -> None:
        self._call("DELETE", f"{collection}/{ident}")

    def add_tag(self, collection: str, ident: str, tag: str) -> None:
        self._call("PUT", f"{collection}/{ident}/tags/{urllib.parse.quote(tag)}")

    def close(self) -> None:
        """Close the session's pooled connections."""
        self._adapter.session.session.close()

    def auto_allocated_topology(self, project_id: str, dry_run: bool = False) -> Doc:
        """Neutron's auto-allocated topology of the project (made on the first call), or only
        the check that it could be made (``dry_run``); its 409 when Neutron cannot."""
        path = f"auto-allocated-topology/{project_id}" + ("?fields=dry-run" if dry_run else "")
        found: Doc = self._call("GET", path)["auto_allocated_topology"]
        return found

    # --- a port's bindings (the ``binding-extended`` extension) ----------------------------

    def create_binding(self, port_id: str, binding: Doc) -> Doc:
        made: Doc = self._call("POST", f"ports/{port_id}/bindings", {"binding": binding})["binding"]
        return made

    def show_binding(self, port_id: str, host: str) -> Doc:
        found: Doc = self._call("GET", f"ports/{port_id}/bindings/{_segment(host)}")["binding"]
        return found

    def activate_binding(self, port_id: str, host: str) -> Doc:
        """The binding made active (Neutron answers it unwrapped, not under ``binding``)."""
        return self._call("PUT", f"ports/{port_id}/bindings/{_segment(host)}/activate")

    def delete_binding(self, port_id: str, host: str) -> None:
        self._call("DELETE", f"ports/{port_id}/bindings/{_segment(host)}")

    def quota(self, project_id: str) -> Doc:
        found: Doc = self._call("GET", f"quotas/{project_id}")["quota"]
        return found


def _failure(resp: Any, status: int, request: str) -> Exception:
    """What Neutron's error answer means: unavailable (5xx), else its refusal."""
    if status >= 500:
        return NeutronUnavailable(f"Neutron answered {status} to {request}: {resp.text}")
    try:
        error = resp.json().get("NeutronError") or {}
    except ValueError:
        error = {}
    return NeutronFault(status, str(error.get("type", "")), str(error.get("message", resp.text)))


def _plural(collection: str) -> str:
    """The body key of a collection (``security-groups`` -> ``security_groups``)."""
    return collection.replace("-", "_")


def _singular(collection: str) -> str:
    return _plural(collection)[:-1]


def _segment(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    return str(value)

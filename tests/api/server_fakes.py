"""In-memory stand-ins for the conductor and compute roles, and shortcuts that play their part
(placing a build in a cell as conductor would, marking it ACTIVE as compute would), for the
servers API tests (tests/api/test_servers_*.py)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from openkeel.api.services import ApiServices
from openkeel.db.image_catalog import DEFAULT_IMAGE
from openkeel.db.repositories import build_requests, instance_mappings, instances
from openkeel.db.schema import cell as cell_tables
from openkeel.domain.instances import Instance, InstanceUpdate
from openkeel.rpc.messages import RpcMessage
from tests.client import ApiClient
from tests.conftest import CELL1_UUID

IMAGE = DEFAULT_IMAGE.id
ADMIN = "admin:admin"
USER = "demo:demo"


class Recorder:
    """A role client that records what it is asked to send: ``calls`` is [(name, details)].

    A typed message (``cast(context, [host,] message)``) is recorded under its RPC method name
    with its fields, the ``message`` itself and the ``host`` it went to (None: any/all).
    """

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        def record(context: Any, *args: Any, **kwargs: Any) -> None:
            message = args[-1] if args and isinstance(args[-1], RpcMessage) else None
            if message is None:
                self.calls.append((name, {"context": context, "args": args, **kwargs}))
                return
            fields = {f.name: getattr(message, f.name) for f in dataclasses.fields(message)}  # type: ignore[arg-type]
            host = args[0] if len(args) == 2 else None
            details = {"context": context, "host": host, "message": message, **fields}
            self.calls.append((message.method, details))

        return record

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


def wire(services: ApiServices) -> tuple[Recorder, Recorder]:
    """Give the API fake conductor and compute clients."""
    conductor, compute = Recorder(), Recorder()
    services.conductor = conductor  # type: ignore[assignment]
    services.compute = compute  # type: ignore[assignment]
    return conductor, compute


def flavor(
    api: ApiClient, flavorid: str = "1", ram: int = 512, vcpus: int = 1, disk: int = 1
) -> None:
    body = {
        "flavor": {"name": f"f{flavorid}", "ram": ram, "vcpus": vcpus, "disk": disk, "id": flavorid}
    }
    assert api.post("/v2.1/flavors", json=body, token=ADMIN).status_code == 200


def create(
    api: ApiClient, version: str = "2.1", token: str = USER, **server: Any
) -> dict[str, Any]:
    body = {"server": {"name": "vm", "imageRef": IMAGE, "flavorRef": "1", **server}}
    if version >= "2.37" and "networks" not in server and len(version) >= 4:
        body["server"]["networks"] = "none"
    resp = api.post("/v2.1/servers", json=body, version=version, token=token)
    assert resp.status_code == 202, resp.text
    result: dict[str, Any] = resp.json()
    return result


def place(
    services: ApiServices,
    server_id: str,
    *,
    host: str | None = "host1",
    active: bool = True,
    cell: str = CELL1_UUID,
    **changes: Any,
) -> Instance:
    """Do what conductor (and compute, when ``active``) do: the row in a cell, no build."""
    with services.api_db.begin() as api:
        built = build_requests.get(api, server_id).instance
        build_requests.delete(api, server_id)
        instance_mappings.set_cell(api, server_id, cell)
    now = datetime.now(UTC).replace(tzinfo=None)
    row = dataclasses.replace(built, host=host, node=host, availability_zone="nova")
    if active:
        row = dataclasses.replace(
            row, vm_state="active", task_state=None, power_state=1, launched_at=now
        )
    with services.cell_dbs[cell].begin() as conn:
        instances.create(conn, row)
        if changes:
            instances.update(conn, server_id, InstanceUpdate(**changes))
        return instances.get(conn, server_id)


def host_up(services: ApiServices, host: str = "host1") -> None:
    """A compute service row for ``host`` that reports up (the API then casts to it)."""
    with services.cell_dbs[CELL1_UUID].begin() as conn:
        conn.execute(
            sa.insert(cell_tables.services).values(
                host=host, binary="nova-compute", topic="compute", report_count=1,
                disabled=False, forced_down=False, deleted=0, version=66,
                created_at=sa.func.now(), last_seen_up=sa.func.now(), updated_at=sa.func.now(),
            )
        )  # fmt: skip


def placed_server(api: ApiClient, services: ApiServices) -> str:
    """An ACTIVE server of USER on host1 (flavor 1 created first)."""
    flavor(api)
    sid: str = create(api)["server"]["id"]
    place(services, sid)
    return sid

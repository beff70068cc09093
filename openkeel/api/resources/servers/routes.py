"""Routes of the servers resource with their microversion windows and schemas."""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from openkeel.api.microversion import v
from openkeel.api.resources.servers import (
    handlers_actions,
    handlers_create,
    handlers_pending,
    handlers_read,
    handlers_rebuild,
    handlers_shelve,
    handlers_snapshot,
    handlers_write,
)
from openkeel.api.resources.servers import schemas_create as create
from openkeel.api.resources.servers import schemas_pending as pending
from openkeel.api.resources.servers import schemas_query as query
from openkeel.api.resources.servers import schemas_update as update
from openkeel.api.routing import Endpoint, RouteTable, endpoint
from openkeel.api.validation import Versioned

COLLECTION = "/servers"
DETAIL = "/servers/detail"
MEMBER = "/servers/{id}"
ACTION = "/servers/{id}/action"
POLICY = "os_compute_api:servers:%s"

CREATE_BODY = Versioned.of(
    ("2.0", create.CREATE_V20),
    ("2.1", create.CREATE_V21),
    ("2.19", create.CREATE_V219),
    ("2.32", create.CREATE_V232),
    ("2.33", create.CREATE_V233),
    ("2.37", create.CREATE_V237),
    ("2.42", create.CREATE_V242),
    ("2.52", create.CREATE_V252),
    ("2.57", create.CREATE_V257),
    ("2.63", create.CREATE_V263),
    ("2.67", create.CREATE_V267),
    ("2.74", create.CREATE_V274),
    ("2.90", create.CREATE_V290),
    ("2.94", create.CREATE_V294),
)
UPDATE_BODY = Versioned.of(
    ("2.0", update.UPDATE_V20),
    ("2.1", update.UPDATE_V21),
    ("2.19", update.UPDATE_V219),
    ("2.90", update.UPDATE_V290),
    ("2.94", update.UPDATE_V294),
    ("2.104", update.UPDATE_V2104),
)
LIST_QUERY = Versioned.of(
    ("2.0", query.INDEX_V21),
    ("2.26", query.INDEX_V226),
    ("2.66", query.INDEX_V266),
    ("2.73", query.INDEX_V273),
    ("2.75", query.INDEX_V275),
)
SHOW_QUERY = Versioned.of(("2.0", query.SHOW_V21), ("2.102", query.SHOW_V2102))


class _Routes(Protocol):
    def add(self, method: str, template: str, ep: Endpoint) -> None: ...

    def add_action(self, template: str, key: str, ep: Endpoint) -> None: ...


# Nova's os-volumes_boot: the servers controller again, under another path, until 2.102,
# with the actions of the servers controller itself (not those of other extensions).
VOLUMES_BOOT_UNTIL = "2.102"
_VOLUMES_BOOT_ACTIONS = frozenset(
    {"confirmResize", "createImage", "os-start", "os-stop", "reboot", "rebuild", "resize",
     "revertResize", "trigger_crash_dump"}
)  # fmt: skip


class _VolumesBoot:
    """Registers what it is given under ``/os-volumes_boot`` instead of ``/servers``."""

    def __init__(self, table: RouteTable) -> None:
        self._table = table

    @staticmethod
    def _moved(template: str) -> str:
        return "/os-volumes_boot" + template.removeprefix(COLLECTION)

    @staticmethod
    def _capped(ep: Endpoint) -> Endpoint:
        return replace(ep, max_version=min(ep.max_version, v(VOLUMES_BOOT_UNTIL)))

    def add(self, method: str, template: str, ep: Endpoint) -> None:
        self._table.add(method, self._moved(template), self._capped(ep))

    def add_action(self, template: str, key: str, ep: Endpoint) -> None:
        if key in _VOLUMES_BOOT_ACTIONS:
            self._table.add_action(self._moved(template), key, self._capped(ep))


def register(table: RouteTable) -> None:
    """Add the servers routes to ``table``, and their ``/os-volumes_boot`` proxy."""
    _register(table)
    _register(_VolumesBoot(table))


def _register(table: _Routes) -> None:
    table.add(
        "GET",
        COLLECTION,
        endpoint(handlers_read.list_servers, query=LIST_QUERY, policy=POLICY % "index"),
    )
    table.add(
        "POST",
        COLLECTION,
        endpoint(
            handlers_create.create_server, status=202, body=CREATE_BODY, policy=POLICY % "create"
        ),
    )
    table.add(
        "GET",
        DETAIL,
        endpoint(handlers_read.list_servers_detail, query=LIST_QUERY, policy=POLICY % "detail"),
    )
    table.add(
        "GET",
        MEMBER,
        endpoint(handlers_read.show_server, query=SHOW_QUERY, policy=POLICY % "show", bounded=True),
    )
    table.add(
        "PUT",
        MEMBER,
        endpoint(handlers_write.update_server_handler, body=UPDATE_BODY, policy=POLICY % "update"),
    )
    table.add(
        "DELETE",
        MEMBER,
        endpoint(handlers_write.delete_server, status=204, policy=POLICY % "delete"),
    )
    _actions(table)
    _pending_actions(table)


def _actions(table: _Routes) -> None:
    for key, handler, schema, policy in (
        ("os-start", handlers_actions.start_server, update.START, POLICY % "start"),
        ("os-stop", handlers_actions.stop_server, update.STOP, POLICY % "stop"),
        ("reboot", handlers_actions.reboot_server, update.REBOOT, POLICY % "reboot"),
        (
            "forceDelete",
            handlers_actions.force_delete_server,
            update.FORCE_DELETE,
            "os_compute_api:os-deferred-delete:force",
        ),
        (
            "restore",
            handlers_actions.restore_server,
            update.RESTORE,
            "os_compute_api:os-deferred-delete:restore",
        ),
    ):
        table.add_action(
            ACTION,
            key,
            endpoint(handler, status=202, body=Versioned.of(("2.0", schema)), policy=policy),
        )


REBUILD_BODY = Versioned.of(
    ("2.0", pending.REBUILD_V20),
    ("2.1", pending.REBUILD_V21),
    ("2.19", pending.REBUILD_V219),
    ("2.54", pending.REBUILD_V254),
    ("2.57", pending.REBUILD_V257),
    ("2.63", pending.REBUILD_V263),
    ("2.90", pending.REBUILD_V290),
    ("2.94", pending.REBUILD_V294),
)


def _pending_actions(table: _Routes) -> None:
    def once(schema: dict[str, object]) -> Versioned:
        return Versioned.of(("2.0", schema))

    for key, handler, status, body, since, action in (
        ("confirmResize", handlers_pending.confirm_resize, 204, once(pending.CONFIRM_RESIZE),
         "2.1", "confirm_resize"),
        ("revertResize", handlers_pending.revert_resize, 202, once(pending.REVERT_RESIZE),
         "2.1", "revert_resize"),
        ("resize", handlers_pending.resize, 202, once(pending.RESIZE), "2.1", "resize"),
        ("rebuild", handlers_rebuild.rebuild, 202, REBUILD_BODY, "2.1", "rebuild"),
        ("createImage", handlers_snapshot.create_image, 202, once(pending.CREATE_IMAGE), "2.1",
         "create_image"),
        ("trigger_crash_dump", handlers_pending.trigger_crash_dump, 202,
         once(pending.TRIGGER_CRASH_DUMP), "2.17", "trigger_crash_dump"),
    ):  # fmt: skip
        ep = endpoint(handler, status=status, since=since, body=body, policy=POLICY % action)
        table.add_action(ACTION, key, ep)
    shelve_policy = "os_compute_api:os-shelve:%s"
    unshelve = Versioned.of(
        ("2.0", pending.UNSHELVE_V21),
        ("2.77", pending.UNSHELVE_V277),
        ("2.91", pending.UNSHELVE_V291),
    )
    for key, handler, body, rule in (
        ("shelve", handlers_shelve.shelve, once(pending.SHELVE), "shelve"),
        ("shelveOffload", handlers_shelve.shelve_offload, once(pending.SHELVE_OFFLOAD), "shelve_offload"),
        ("unshelve", handlers_shelve.unshelve, unshelve, "unshelve"),
    ):  # fmt: skip
        ep = endpoint(handler, status=202, body=body, policy=shelve_policy % rule)
        table.add_action(ACTION, key, ep)
    backup = Versioned.of(("2.0", pending.CREATE_BACKUP_V20), ("2.1", pending.CREATE_BACKUP_V21))
    table.add_action(
        ACTION,
        "createBackup",
        endpoint(
            handlers_snapshot.create_backup,
            status=202,
            body=backup,
            policy="os_compute_api:os-create-backup",
        ),
    )

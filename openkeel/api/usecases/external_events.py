"""External instance events (POST /os-server-external-events): other services (the network
and volume services, Ironic, Cyborg) report what happened to an instance; each event is
answered on its own and the accepted ones go to the compute hosts concerned.

Called by the server_external_events resource. As Nova: an unknown instance is a per-event
404, an event whose name needs a tag and has none a 400, an instance without a host a 422
(the answer is then 207); accepted events are cast, one ``ExternalInstanceEvent`` per host,
to the instance's host and, while it migrates, to the source and destination too.
``volume-extended`` and ``power-update`` record an instance action (extend_volume,
start/stop) for the user to follow.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.api.usecases.servers.create import call_context
from openkeel.db.repositories import instance_actions, instance_mappings, instances, migrations
from openkeel.domain.errors import NotFound, ServiceUnavailable
from openkeel.domain.instances import Instance
from openkeel.rpc.messages.compute import ExternalEvent, ExternalInstanceEvent

LOG = logging.getLogger(__name__)

POLICY = "os_compute_api:os-server-external-events:create"
TAG_REQUIRED = frozenset({"volume-extended", "power-update", "accelerator-request-bound"})
POWER_ACTIONS = {"POWER_ON": "start", "POWER_OFF": "stop"}


@dataclass(frozen=True)
class Answer:
    """The per-event outcome Nova reports: ``status`` and HTTP-like ``code``."""

    status: str
    code: int


@dataclass
class _Target:
    instance: Instance
    cell: sa.Engine
    hosts: list[str]


def _targets(services: ApiServices, uuids: list[str]) -> dict[str, _Target]:
    with services.api_db.connect() as conn:
        mapped = instance_mappings.get_many(conn, uuids)
    found: dict[str, _Target] = {}
    for uuid, mapping in mapped.items():
        engine = (services.cell_dbs or {}).get(mapping.cell_uuid or "")
        if engine is None:
            continue
        with engine.connect() as conn:
            try:
                inst = instances.get(conn, uuid)
            except NotFound:
                continue
            moving = migrations.hosts_of_unfinished(conn, uuid) if inst.host else set()
        hosts = [inst.host] if inst.host else []
        hosts += sorted(moving - set(hosts))
        found[uuid] = _Target(inst, engine, hosts)
    return found


def create_events(
    services: ApiServices, context: RequestContext, events: list[dict[str, Any]]
) -> tuple[list[Answer], bool]:
    """Answer each event and send the accepted ones; True when every event was accepted."""
    context.can(POLICY, {})
    targets = _targets(services, list(dict.fromkeys(e["server_uuid"] for e in events)))
    answers: list[Answer] = []
    accepted: list[tuple[_Target, ExternalEvent]] = []
    for body in events:
        event = ExternalEvent(body["server_uuid"], body["name"], body.get("status", "completed"), body.get("tag"))  # fmt: skip
        target = targets.get(event.instance_uuid)
        if target is None:
            LOG.debug("Dropping event %s for unknown instance %s", event.key, event.instance_uuid)
            answers.append(Answer("failed", 404))
        elif event.name in TAG_REQUIRED and event.tag is None:
            answers.append(Answer("failed", 400))
        elif not target.hosts:
            answers.append(Answer("failed", 422))
        else:
            LOG.info("Creating event %s for instance %s on %s", event.key, event.instance_uuid, target.hosts[0])  # fmt: skip
            answers.append(Answer("completed", 200))
            accepted.append((target, event))
    compute = services.compute
    if accepted and compute is None:
        raise ServiceUnavailable("No compute service can be reached from this API process.")
    by_host: dict[str, list[ExternalEvent]] = defaultdict(list)
    for target, event in accepted:
        if _record_action(context, target, event):
            for host in target.hosts:
                by_host[host].append(event)
    for host, sent in by_host.items():
        assert compute is not None
        compute.cast(call_context(context), host, ExternalInstanceEvent.of(sent))
    return answers, all(a.code == 200 for a in answers)


def _record_action(context: RequestContext, target: _Target, event: ExternalEvent) -> bool:
    """Record the instance action the event starts, if any; False when the event is to be
    dropped (a power-update to an unknown power state: accepted, but not sent, as Nova)."""
    if event.name == "volume-extended":
        action = "extend_volume"
    elif event.name == "power-update":
        if event.tag not in POWER_ACTIONS:
            LOG.warning("Invalid power state %s; skipping the event %s", event.tag, event.key)
            return False
        action = POWER_ACTIONS[event.tag]
    else:
        return True
    with target.cell.begin() as conn:
        instance_actions.start_action(
            conn, target.instance.uuid, action, request_id=context.request_id,
            user_id=context.user_id, project_id=context.project_id,
        )  # fmt: skip
    return True

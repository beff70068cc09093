"""The heal_instance_info_cache periodic task (openkeel.compute.polls; the unconfirmed-resize
poll is tested across the roles in tests/functional/test_resize.py)."""

from __future__ import annotations

import calendar
import threading

import sqlalchemy as sa

from openkeel.compute import polls
from openkeel.compute.operations.build import build_and_run
from openkeel.db.repositories import console_auth_tokens as tokens
from openkeel.domain.instances import InstanceUpdate
from openkeel.rpc.message import CallContext
from openkeel.rpc.messages.compute import BuildAndRunInstance
from tests.compute.cloud import Cloud
from tests.conftest import CELL1_UUID

CTX = CallContext(user_id="demo", project_id="demo")


def test_heal_refreshes_one_server_per_run_round_robin(cloud: Cloud) -> None:
    compute = cloud.compute().start(background=False)
    uuids = []
    for _ in range(2):
        instance = cloud.instance(compute)
        build_and_run(compute.host, CTX, BuildAndRunInstance(instance.uuid))
        uuids.append(instance.uuid)
    healed = {u: cloud.cell1.get(u).network_info for u in uuids}
    assert all(healed.values())
    heal = polls.InfoCacheHealer(compute.host)
    assert heal() is None  # heal_instance_info_cache_interval -1: disabled
    cloud.services.conf.set_override("heal_instance_info_cache_interval", 60)
    for uuid in uuids:
        cloud.cell1.update(uuid, InstanceUpdate(network_info=[]))
    assert [heal(), heal()] == uuids
    assert {u: cloud.cell1.get(u).network_info for u in uuids} == healed
    # A server an operation (another thread) holds is passed over this time.
    cloud.cell1.update(uuids[0], InstanceUpdate(network_info=[]))
    held, release = threading.Event(), threading.Event()

    def operation() -> None:
        with compute.host.locks.hold(uuids[0]):
            held.set()
            release.wait(10)

    worker = threading.Thread(target=operation)
    worker.start()
    try:
        assert held.wait(10)
        assert heal() == uuids[1]
    finally:
        release.set()
        worker.join(10)
    assert heal() == uuids[0]


def test_expired_console_tokens_are_removed_every_instance_delete_interval(cloud: Cloud) -> None:
    """Nova's _cleanup_expired_console_auth_tokens: every ``instance_delete_interval`` the
    tokens of the cell that have expired go; a token still valid stays usable."""
    compute = cloud.compute().start(background=False)
    instance = cloud.instance(compute)
    now = calendar.timegm(cloud.clock.now().timetuple())
    target = tokens.ConsoleTarget("novnc", "127.0.0.1", 5900, instance.uuid)
    with cloud.services.cell_dbs[CELL1_UUID].begin() as conn:
        expired = tokens.authorize(conn, target, now + 10)
        valid = tokens.authorize(conn, target, now + 900)
    cloud.clock.advance(299)
    assert "cleanup_expired_console_auth_tokens" not in compute.periodic.run_due()
    cloud.clock.advance(1)
    assert "cleanup_expired_console_auth_tokens" in compute.periodic.run_due()
    with cloud.services.cell_dbs[CELL1_UUID].connect() as conn:
        remaining = conn.execute(sa.select(sa.func.count()).select_from(tokens._T)).scalar()
        assert remaining == 1
        assert tokens.validate(conn, valid, now + 300) is not None
        assert tokens.validate(conn, expired, now) is None  # gone, not merely expired

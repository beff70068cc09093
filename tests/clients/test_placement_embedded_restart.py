"""The embedded Placement started again after its process was killed (kill -9).

Placement creates a new consumer in a transaction of its own and writes its allocations in the
next one, removing the consumer only when that write raises. A process killed between the two
leaves a consumer without allocations (generation 0). ``GET /allocations/{c}`` does not show it,
so every later write for that uuid sends generation None and is refused ("consumer generation
conflict - expected 0 but got None"): in tests/faults an instance killed mid-resize could never
get its allocations back nor be resized again. Nothing else writes to the embedded Placement's
file before it starts, so it drops such leftovers then.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import sqlalchemy as sa

from openkeel.clients.placement_embedded import DB_FILE, EmbeddedPlacement
from openkeel.clients.placement_models import Inventory

NODE = str(uuid.uuid4())


def _consumer_left_by_a_crash(data_dir: Path, consumer: str) -> None:
    """A consumer row of an existing project and user, generation 0, no allocations."""
    engine = sa.create_engine(f"sqlite:///{data_dir / DB_FILE}")
    with engine.begin() as conn:
        project, user, kind = conn.execute(
            sa.text("SELECT project_id, user_id, consumer_type_id FROM consumers LIMIT 1")
        ).one()
        conn.execute(
            sa.text(
                "INSERT INTO consumers (uuid, project_id, user_id, generation, consumer_type_id,"
                " created_at) VALUES (:uuid, :project, :user, 0, :kind, CURRENT_TIMESTAMP)"
            ),
            {"uuid": consumer, "project": project, "user": user, "kind": kind},
        )
    engine.dispose()


def test_a_consumer_left_without_allocations_by_a_crash_can_be_allocated_after_restart(
    tmp_path: Path,
) -> None:
    interrupted = str(uuid.uuid4())
    with EmbeddedPlacement(tmp_path) as placement:
        client = placement.client(backoff=lambda attempt: None)
        client.ensure_provider(NODE, "node-1")
        client.set_inventories(NODE, {"VCPU": Inventory(total=8)})
        client.claim(str(uuid.uuid4()), {NODE: {"VCPU": 1}}, project_id="p", user_id="u")
        client.close()
    _consumer_left_by_a_crash(tmp_path, interrupted)
    with EmbeddedPlacement(tmp_path) as placement:
        client = placement.client(backoff=lambda attempt: None)
        client.claim(interrupted, {NODE: {"VCPU": 2}}, project_id="p", user_id="u")
        assert client.get_allocations(interrupted).allocations == {NODE: {"VCPU": 2}}
        client.close()

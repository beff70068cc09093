"""Cinder's ``os-migrate_volume_completion`` in the embedded volume service: a compute host
swapped a server's volume (Nova's swap_volume) and says how it went.

Called by :meth:`openkeel.volume.embedded.adapter.EmbeddedVolumes.migrate_volume_completion`.
Cinder's two cases:

* neither volume migrating (a swap Nova started): nothing moves; the answer is the new
  volume's id (the attachments API already made the old one available and the new in-use);
* the old volume migrating (Cinder's migration asked Nova to swap to its target): on success
  the ids swap, as Cinder's ``finish_volume_migration`` does: the old volume takes the new one's
  data, size and attachments and keeps its id, the target record goes, ``migration_status``
  becomes ``success``; the answer is the old id. On error the target is deleted and the old
  volume keeps its data with ``migration_status`` ``error``.
"""

from __future__ import annotations

from openkeel.volume.embedded.service import Caller, VolumeService


def complete(service: VolumeService, caller: Caller, old_id: str, new_id: str, error: bool) -> str:
    """Finish the swap of ``old_id`` for ``new_id``; the id the server's mapping keeps."""
    old = service.volume(caller, old_id)
    new = service.volume(caller, new_id)
    if not (old["migration_status"] or new["migration_status"]):
        return old_id if error else new_id
    if error:
        _drop(service, new_id)
        service.store.update("volumes", old_id, {"migration_status": "error"})
        return old_id
    # The target's data becomes the source's: its file moves under the source's name.
    service.files.delete(old_id)
    if service.files.path(new_id).exists():
        service.files.path(new_id).rename(service.files.path(old_id))
    for attachment in service.attachments_of(new_id):
        service.store.update("attachments", attachment["id"], {"volume_id": old_id})
    service.store.delete("volumes", new_id)
    service.store.update("volumes", old_id, {"size": new["size"], "migration_status": "success"})
    service.settle(old_id)
    return old_id


def _drop(service: VolumeService, volume_id: str) -> None:
    for attachment in service.attachments_of(volume_id):
        service.store.delete("attachments", attachment["id"])
    service.files.delete(volume_id)
    service.store.delete("volumes", volume_id)

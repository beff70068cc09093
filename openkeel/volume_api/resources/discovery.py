"""Versions, limits, quotas, availability zones and extensions."""

from __future__ import annotations

from typing import Any

from openkeel.volume.embedded.faults import policy
from openkeel.volume.embedded.service import QUOTAS
from openkeel.volume_api.request import MAX_VERSION, MIN_VERSION, Reply, VolumeRequest, text
from openkeel.volume_api.routing import Endpoint, RouteTable


def _version(req: VolumeRequest) -> dict[str, Any]:
    return {
        "id": "v3.0", "status": "CURRENT", "version": text(MAX_VERSION),
        "min_version": text(MIN_VERSION), "updated": "2023-08-31T00:00:00Z",
        "links": [{"rel": "describedby", "type": "text/html",
                   "href": "https://docs.openstack.org/"},
                  {"rel": "self", "href": f"{req.base}/v3/"}],
        "media-types": [{"base": "application/json",
                         "type": "application/vnd.openstack.volume+json;version=3"}],
    }  # fmt: skip


def versions(req: VolumeRequest) -> Reply:
    return Reply({"versions": [_version(req)]})


def root_versions(req: VolumeRequest) -> Reply:
    # Cinder answers its root with 300 Multiple Choices.
    return Reply({"versions": [_version(req)]}, 300)


def limits(req: VolumeRequest) -> Reply:
    used = req.service.usage(req.caller.project_id or "")
    absolute = {
        "maxTotalVolumes": QUOTAS["volumes"], "maxTotalSnapshots": QUOTAS["snapshots"],
        "maxTotalVolumeGigabytes": QUOTAS["gigabytes"], "maxTotalBackups": QUOTAS["backups"],
        "maxTotalBackupGigabytes": QUOTAS["backup_gigabytes"],
        "totalVolumesUsed": used["volumes"], "totalSnapshotsUsed": used["snapshots"],
        "totalGigabytesUsed": used["gigabytes"], "totalBackupsUsed": 0,
        "totalBackupGigabytesUsed": 0,
    }  # fmt: skip
    return Reply({"limits": {"rate": [], "absolute": absolute}})


def _quota_set(project: str, req: VolumeRequest, usage: bool) -> dict[str, Any]:
    limits_: dict[str, int] = dict(QUOTAS)
    for vtype in req.service.store.list("types"):  # Cinder's per-type resources, unlimited
        for kind in ("volumes", "snapshots", "gigabytes"):
            limits_[f"{kind}_{vtype['name']}"] = -1
    if not usage:
        return {"id": project, **limits_}
    used = req.service.usage(project)
    # Cinder 29's DbQuotaDriver shows no "allocated" (the nested driver's, removed).
    return {"id": project, **{k: {"limit": v, "in_use": used.get(k, 0), "reserved": 0}
                              for k, v in limits_.items()}}  # fmt: skip


def quota_set(req: VolumeRequest) -> Reply:
    project = req.params["project_id"]
    if project != req.caller.project_id and not req.caller.is_admin:
        raise policy("volume_extension:quotas:show")
    return Reply({"quota_set": _quota_set(project, req, req.flag("usage"))})


def quota_defaults(req: VolumeRequest) -> Reply:
    return Reply({"quota_set": _quota_set(req.params["project_id"], req, False)})


def zones(req: VolumeRequest) -> Reply:
    zone = {"zoneName": req.service.zone, "zoneState": {"available": True}}
    return Reply({"availabilityZoneInfo": [zone]})


def extensions(req: VolumeRequest) -> Reply:
    return Reply({"extensions": []})


def register(table: RouteTable) -> None:
    table.add("GET", "/", Endpoint(root_versions, anonymous=True))
    table.add("GET", "/v3", Endpoint(versions, anonymous=True))
    table.add("GET", "/v3/limits", Endpoint(limits))
    table.add("GET", "/v3/os-quota-sets/{project_id}", Endpoint(quota_set))
    table.add("GET", "/v3/os-quota-sets/{project_id}/defaults", Endpoint(quota_defaults))
    table.add("GET", "/v3/os-availability-zone", Endpoint(zones))
    table.add("GET", "/v3/extensions", Endpoint(extensions))

"""nova-conductor and nova-scheduler in GET /os-services beside nova-compute, as Nova lists
them: their own records with heartbeats, in the internal zone, refused updates; a record
deleted through the API comes back with the next heartbeat. os-hosts and the usage audit log
through the compute role."""

from __future__ import annotations

from typing import Any

from openkeel.compute import usage_audit
from tests.functional.conftest import Cloud


def _services(cloud: Cloud, version: str = "2.53") -> dict[str, Any]:
    listed = cloud.api.get("/v2.1/os-services", version=version).json()["services"]
    return {s["binary"]: s for s in listed}


def test_every_binary_is_listed_with_its_heartbeat(cloud: Cloud) -> None:
    by_binary = _services(cloud)
    assert set(by_binary) == {"nova-conductor", "nova-scheduler", "nova-compute"}
    for binary in ("nova-conductor", "nova-scheduler"):
        service = by_binary[binary]
        assert (service["zone"], service["state"], service["status"]) == ("internal", "up", "enabled")  # fmt: skip
        assert service["host"] == cloud.services.conf.host
    assert by_binary["nova-compute"]["zone"] == "nova"
    scheduler = cloud.roles.scheduler
    conductor = cloud.roles.conductor
    assert scheduler is not None and conductor is not None
    assert scheduler.presence is not None and conductor.presence is not None
    scheduler.presence.report()
    conductor.presence.report()
    reported = _services(cloud)
    assert reported["nova-scheduler"]["updated_at"] is not None
    assert reported["nova-conductor"]["updated_at"] is not None
    zones = cloud.api.get("/v2.1/os-availability-zone/detail").json()["availabilityZoneInfo"]
    internal = [z for z in zones if z["zoneName"] == "internal"]
    assert internal and set(next(iter(internal[0]["hosts"].values()))) == {"nova-conductor", "nova-scheduler"}  # fmt: skip


def test_only_compute_services_can_be_updated(cloud: Cloud) -> None:
    scheduler = _services(cloud)["nova-scheduler"]
    resp = cloud.api.put(f"/v2.1/os-services/{scheduler['id']}", {"status": "disabled"}, version="2.53")  # fmt: skip
    assert resp.status_code == 400
    assert resp.json()["badRequest"]["message"] == (
        "Updating a nova-scheduler service is not supported. Only nova-compute services can be updated."
    )
    legacy = cloud.api.put(
        "/v2.1/os-services/disable",
        {"host": cloud.services.conf.host, "binary": "nova-conductor"},
    )
    assert legacy.status_code == 400


def test_a_deleted_record_comes_back(cloud: Cloud) -> None:
    conductor = _services(cloud)["nova-conductor"]
    assert cloud.api.delete(f"/v2.1/os-services/{conductor['id']}", version="2.53").status_code == 204  # fmt: skip
    assert "nova-conductor" not in _services(cloud)
    assert cloud.roles.conductor is not None and cloud.roles.conductor.presence is not None
    cloud.roles.conductor.presence.report()
    again = _services(cloud)["nova-conductor"]
    assert again["id"] != conductor["id"] and again["state"] == "up"


def test_os_hosts_through_the_compute_host(cloud: Cloud) -> None:
    (service,) = cloud.computes.values()
    host = service.hostname
    listed = cloud.api.get("/v2.1/os-hosts").json()["hosts"]
    assert {(h["service"], h["zone"]) for h in listed} == {
        ("compute", "nova"), ("conductor", "internal"), ("scheduler", "internal"),
    }  # fmt: skip
    shown = cloud.api.get(f"/v2.1/os-hosts/{host}").json()["host"]
    assert shown[0]["resource"]["project"] == "(total)"
    disabled = cloud.api.put(f"/v2.1/os-hosts/{host}", {"status": "disable"})
    assert disabled.json() == {"host": host, "status": "disabled"}
    assert service.host.driver.host_enabled is False  # type: ignore[attr-defined]
    reboot = cloud.api.get(f"/v2.1/os-hosts/{host}/reboot")
    assert reboot.json() == {"host": host, "power_action": "reboot"}
    maintenance = cloud.api.put(f"/v2.1/os-hosts/{host}", {"maintenance_mode": "enable"})
    assert maintenance.status_code == 501


def test_usage_audit_reported_through_the_api(cloud: Cloud) -> None:
    (service,) = cloud.computes.values()
    sid = cloud.boot("audited")["id"]
    assert cloud.wait(sid)["status"] == "ACTIVE"
    conf = cloud.services.conf
    conf.set_override("instance_usage_audit", True)
    conf.set_override("instance_usage_audit_period", "hour")
    try:
        before = cloud.api.get("/v2.1/os-instance_usage_audit_log").json()
        assert before["instance_usage_audit_logs"]["hosts_not_run"] == [service.hostname]
        assert usage_audit.instance_usage_audit(service.host)
        after = cloud.api.get("/v2.1/os-instance_usage_audit_log").json()["instance_usage_audit_logs"]  # fmt: skip
        assert (after["num_hosts_done"], after["overall_status"]) == (
            1,
            "ALL hosts done. 0 errors.",
        )
        # Counted when it launched before the audited hour ended (not, unless the hour
        # turned between the boot and the audit).
        launched = cloud.api.get(f"/v2.1/servers/{sid}").json()["server"]["OS-SRV-USG:launched_at"]  # fmt: skip
        expected = int(launched.replace("T", " ") < after["period_ending"])
        assert after["log"][service.hostname]["instances"] == expected
    finally:
        conf.clear_override("instance_usage_audit")
        conf.clear_override("instance_usage_audit_period")

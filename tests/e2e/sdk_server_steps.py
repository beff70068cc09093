"""openstacksdk's server workflows, run as a separate process by test_sdk_servers.py.

``python -m tests.e2e.sdk_server_steps STEP`` logs in with clouds.yaml (the embedded identity
service), runs one workflow and prints one JSON document of what the SDK saw.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import openstack

IMAGE = "cirros-0.6.3-x86_64-disk"


def compute_proxy(conn: Any) -> dict[str, Any]:
    """``conn.compute.*``: create, wait, list, stop/start, metadata, delete."""
    image = conn.image.find_image(IMAGE)
    flavor = conn.compute.find_flavor("m1.tiny")
    server = conn.compute.create_server(
        name="sdk-proxy-vm", image_id=image.id, flavor_id=flavor.id, networks="none"
    )
    server = conn.compute.wait_for_server(server, wait=120)
    seen: dict[str, Any] = {"status": server.status, "project": server.project_id}
    seen["listed"] = [s.name for s in conn.compute.servers(name="sdk-proxy-vm")]
    conn.compute.stop_server(server)
    seen["stopped"] = conn.compute.wait_for_server(server, status="SHUTOFF", wait=120).status
    conn.compute.start_server(server)
    seen["started"] = conn.compute.wait_for_server(server, status="ACTIVE", wait=120).status
    conn.compute.set_server_metadata(server, role="e2e")
    seen["metadata"] = conn.compute.get_server_metadata(server).metadata
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, wait=120)
    seen["after_delete"] = conn.compute.find_server("sdk-proxy-vm")
    return seen


def cloud_layer(conn: Any) -> dict[str, Any]:
    """The cloud layer (as Ansible and scripts use it): create with wait, get, list, usage,
    quotas of the caller's project, delete with wait."""
    server = conn.create_server(
        "sdk-cloud-vm", image=IMAGE, flavor="m1.tiny", auto_ip=False, wait=True, timeout=120,
        nics=[],
    )  # fmt: skip
    seen: dict[str, Any] = {"status": server.status, "project": conn.current_project_id}
    seen["got"] = conn.get_server("sdk-cloud-vm").id == server.id
    seen["listed"] = [s.name for s in conn.list_servers(detailed=True)]
    seen["quota_instances"] = conn.get_compute_quotas(conn.current_project_id).instances
    seen["deleted"] = bool(conn.delete_server("sdk-cloud-vm", wait=True, timeout=120))
    seen["after_delete"] = conn.get_server("sdk-cloud-vm")
    return seen


def main(step: str) -> None:
    conn = openstack.connect(cloud="openkeel")
    try:
        steps = {"compute_proxy": compute_proxy, "cloud_layer": cloud_layer}
        print(json.dumps(steps[step](conn), default=str))
    finally:
        conn.close()


if __name__ == "__main__":
    main(sys.argv[1])

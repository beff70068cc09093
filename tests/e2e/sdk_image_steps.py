"""openstacksdk's image workflows, run as a separate process by test_image_service.py.

A process of its own keeps the SDK's deprecation warnings, threads and sockets out of the test
process. ``python -m tests.e2e.sdk_image_steps STEP IMAGE_FILE`` prints one JSON document of
what the clients saw; the test asserts on it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import openstack


def cloud_layer(conn: Any, image_file: str) -> dict[str, Any]:
    """The cloud layer (``conn.list_images`` ...), as Ansible and scripts use it."""
    seen: dict[str, Any] = {"listed": [i.name for i in conn.list_images()]}
    seen["cirros_status"] = conn.get_image("cirros-0.6.3-x86_64-disk").status
    image = conn.create_image(
        "e2e-sdk", filename=image_file, disk_format="qcow2", container_format="bare", wait=True
    )
    seen["created"] = {"status": image.status, "size": image.size, "id": image.id}
    seen["got_id"] = conn.get_image("e2e-sdk").id
    seen["servers_detailed"] = isinstance(conn.list_servers(detailed=True), list)
    seen["deleted"] = bool(conn.delete_image("e2e-sdk", wait=True))
    seen["after_delete"] = conn.get_image("e2e-sdk")
    return seen


def image_proxy(conn: Any, image_file: str) -> dict[str, Any]:
    """The image proxy (``conn.image.*``)."""
    image = conn.image.create_image(name="e2e-proxy", disk_format="raw", container_format="bare")
    seen: dict[str, Any] = {"created_status": image.status}
    image.data = b"0123456789"
    image.upload(conn.image)
    seen["uploaded_status"] = conn.image.get_image(image).status
    conn.image.update_image(image, name="e2e-proxy2", hw_disk_bus="scsi")
    conn.image.add_tag(image, "t")
    fetched = conn.image.get_image(image)
    seen["updated"] = [fetched.name, fetched.hw_disk_bus, fetched.tags]
    conn.image.remove_tag(image, "t")
    seen["tags_after_remove"] = conn.image.get_image(image).tags
    seen["downloaded"] = conn.image.download_image(image).content.decode()
    seen["filtered"] = [i.name for i in conn.image.images(name="e2e-proxy2")]
    conn.image.delete_image(image)
    seen["after_delete"] = conn.image.find_image("e2e-proxy2")
    return seen


def main(step: str, image_file: str) -> None:
    conn = openstack.connect(cloud="openkeel")
    try:
        steps = {"cloud_layer": cloud_layer, "image_proxy": image_proxy}
        print(json.dumps(steps[step](conn, image_file)))
    finally:
        conn.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

"""``openkeel all-in-one``: the whole cloud in one process on the embedded default.

SQLite databases in the data directory, noauth, the API on the given port. Bootstraps the
databases (API DB, cell0, cell1) and a few standard flavors on first start, writes a
``clouds.yaml`` entry for the ``openstack`` CLI, and prints where everything listens.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from oslo_config import cfg

from openkeel.api.services import ApiServices
from openkeel.clients.image_catalog import EmbeddedImageCatalog
from openkeel.clients.placement_embedded import EmbeddedPlacement
from openkeel.cmd.api import serve
from openkeel.cmd.bootstrap import bootstrap_embedded
from openkeel.cmd.roles import (
    RoleSet,
    api_clients,
    start_compute,
    start_conductor,
    start_scheduler,
)
from openkeel.conf import make_config
from openkeel.db.cells import CELL0_UUID
from openkeel.rpc.transport import get_transport
from openkeel.virt.loading import KUBEVIRT, compute_hosts, load_driver


def clouds_yaml(url: str, identity: str) -> str:
    """The ``clouds.yaml`` entry for this cloud (noauth: the token ``notused`` is admin)."""
    return (
        "clouds:\n"
        "  openkeel:\n"
        "    auth_type: none\n"
        "    auth:\n"
        f"      endpoint: {url}\n"
        f"    compute_endpoint_override: {url}\n"
        "    identity_api_version: 3\n"
        f"    identity_endpoint_override: {identity}\n"
        "    region_name: RegionOne\n"
    )


def start_roles(
    conf: cfg.ConfigOpts, root: Path, api_db: sa.Engine, cell_dbs: dict[str, sa.Engine]
) -> tuple[RoleSet, EmbeddedPlacement]:
    """Placement, then scheduler, conductor and one compute host, on the in-process bus."""
    placement = EmbeddedPlacement(root).start()
    client = placement.client()
    transport = get_transport("inproc://all-in-one")
    roles = RoleSet(transport)
    try:
        roles.scheduler = start_scheduler(conf, transport, client, api_db, cell_dbs)
        roles.conductor = start_conductor(conf, transport, client, api_db, cell_dbs)
        cell1 = next((u, e) for u, e in cell_dbs.items() if u != CELL0_UUID)
        for compute_host in compute_hosts(conf):
            driver = load_driver(conf)
            roles.computes.append(
                start_compute(conf, transport, client, api_db, cell1, driver, compute_host)
            )
    except BaseException:
        roles.stop()
        placement.stop()
        raise
    return roles, placement


def run(
    data_dir: str,
    host: str,
    port: int,
    config_files: Sequence[str],
    kubeconfig: str | None = None,
) -> int:
    """Bootstrap and serve until interrupted."""
    root = Path(data_dir).resolve()
    root.mkdir(parents=True, exist_ok=True)
    conf = make_config(
        config_files=config_files,
        overrides={
            "api.auth_strategy": "noauth2",
            "api_database.connection": f"sqlite:///{root / 'nova_api.sqlite'}",
            "database.connection": f"sqlite:///{root / 'nova.sqlite'}",
            "state_path": str(root),
            **(
                {"compute_driver": KUBEVIRT, "kubevirt.kubeconfig": kubeconfig}
                if kubeconfig
                else {}
            ),
        },
    )
    api_db, cell_dbs = bootstrap_embedded(conf)
    url = f"http://{host}:{port}/v2.1"
    clouds = root / "clouds.yaml"
    clouds.write_text(clouds_yaml(url, f"http://{host}:{port}/identity/v3"))
    print(f"OpenKeel all-in-one: compute API listening on {url}", flush=True)
    print(f"  data directory: {root}", flush=True)
    print(
        f"  clouds.yaml:    {clouds}  (export OS_CLIENT_CONFIG_FILE={clouds};"
        " then: openstack --os-cloud openkeel flavor list)",
        flush=True,
    )
    images = (
        None
        if conf.glance.api_servers or conf.glance.endpoint_override
        else EmbeddedImageCatalog(api_db)
    )
    roles, placement = start_roles(conf, root, api_db, cell_dbs)
    hosts = ", ".join(c.hostname for c in roles.computes)
    driver = "KubeVirt" if conf.compute_driver == KUBEVIRT else "simulated"
    print(
        f"  roles:          conductor, scheduler, compute [{hosts}] ({driver} driver),"
        " embedded Placement",
        flush=True,
    )
    services = ApiServices(
        conf=conf, api_db=api_db, cell_dbs=cell_dbs, images=images, **api_clients(roles.transport)
    )
    try:
        serve(services, host, port)
    finally:
        roles.stop()
        placement.stop()
    return 0

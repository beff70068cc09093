"""``openkeel all-in-one``: the whole cloud in one process on the embedded default.

SQLite databases in the data directory, noauth, the API on the given port. Bootstraps the
databases (API DB, cell0, cell1) and a few standard flavors on first start, writes a
``clouds.yaml`` entry for the ``openstack`` CLI, and prints where everything listens.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from openkeel.api.services import ApiServices
from openkeel.clients.image_catalog import EmbeddedImageCatalog
from openkeel.cmd.api import serve
from openkeel.cmd.bootstrap import bootstrap_embedded
from openkeel.conf import make_config


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


def run(data_dir: str, host: str, port: int, config_files: Sequence[str]) -> int:
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
    serve(ApiServices(conf=conf, api_db=api_db, cell_dbs=cell_dbs, images=images), host, port)
    return 0

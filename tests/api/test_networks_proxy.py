"""The os-networks proxy (2.1-2.35): the networks a project may see, in Nova's form, from the
embedded network service; 404 for another project's network and after 2.35."""

from __future__ import annotations

import jsonschema

from openkeel.api.services import ApiServices
from openkeel.network.embedded.service import Caller
from openkeel.network.factory import get_network_adapter
from openkeel.network.flat import FlatNetwork
from tests.client import ApiClient

PRIVATE = "3b9bc1d4-7b0a-4c41-8f2b-0d0a6e1c0001"


def test_list_and_show(api: ApiClient, services: ApiServices) -> None:
    from nova.api.openstack.compute.schemas import networks as nova_schemas

    adapter = get_network_adapter(services.conf, services.api_db)
    assert isinstance(adapter, FlatNetwork)
    mine = adapter.service.create_network(Caller("demo", False), {"name": "demo-net"})
    theirs = adapter.service.create_network(Caller("other", False), {"name": "other-net"})
    listed = api.get("/v2.1/os-networks", token="demo:demo", version="2.35")
    assert listed.status_code == 200, listed.text
    jsonschema.validate(listed.json(), nova_schemas.index_response)
    labels = {n["label"]: n for n in listed.json()["networks"]}
    assert set(labels) == {"private", "demo-net"}
    assert labels["private"]["id"] == PRIVATE and labels["private"]["cidr"] is None
    assert "project_id" not in labels["private"]  # admin-only field
    shown = api.get(f"/v2.1/os-networks/{mine['id']}", token="demo:demo")
    jsonschema.validate(shown.json(), nova_schemas.show_response)
    assert shown.json()["network"]["label"] == "demo-net"
    hidden = api.get(f"/v2.1/os-networks/{theirs['id']}", token="demo:demo")
    assert hidden.status_code == 404
    assert hidden.json()["itemNotFound"]["message"] == "Network not found"
    admin = api.get("/v2.1/os-networks", token="admin:admin").json()["networks"]
    assert {n["label"] for n in admin} >= {"private", "demo-net", "other-net"}
    assert all("project_id" in n for n in admin)
    assert api.get("/v2.1/os-networks", version="2.36").status_code == 404

"""openstacksdk's network proxy on the all-in-one's routers: create with a gateway, add and
remove an interface, the conflict of a router still in use, delete (decision 0074)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import RunningCloud


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # openstacksdk's own
def test_sdk_routers(cloud: RunningCloud) -> None:
    openstack = pytest.importorskip("openstack", reason="pip install -e '.[oracle]'")
    conn = openstack.connect(
        auth_url=f"{cloud.root}/identity/v3", username="admin", password=cloud.admin_password,
        project_name="admin", user_domain_id="default", project_domain_id="default",
        identity_api_version="3", compute_api_version="2.43",
    )  # fmt: skip
    try:
        public = conn.network.find_network("public")
        assert conn.network.find_router("router1") is not None  # the bootstrap's
        net = conn.network.create_network(name="sdk-rnet")
        subnet = conn.network.create_subnet(network_id=net.id, cidr="192.168.61.0/24",
                                            ip_version=4)  # fmt: skip
        router = conn.network.create_router(name="sdk-router",
                                            external_gateway_info={"network_id": public.id})  # fmt: skip
        assert router.status == "ACTIVE"
        assert router.external_gateway_info["network_id"] == public.id
        info = conn.network.add_interface_to_router(router, subnet_id=subnet.id)
        port = conn.network.get_port(info["port_id"])
        assert port.device_owner == "network:router_interface"
        assert port.fixed_ips[0]["ip_address"] == "192.168.61.1"
        with pytest.raises(
            openstack.exceptions.ConflictException, match="has ports still attached"
        ):
            conn.network.delete_router(router)
        conn.network.remove_interface_from_router(router, subnet_id=subnet.id)
        conn.network.delete_router(router)
        assert conn.network.find_router("sdk-router") is None
        conn.network.delete_network(net)
    finally:
        conn.close()
        conn.session.session.close()  # the test's leak check counts the kept-alive socket

"""Support table completeness (against Nova itself), docs sync, naming, guest metadata."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import jsonschema
import pytest

from openkeel.virt.kubevirt.manifests import cloudinit, naming, networks, support, vm
from openkeel.virt.kubevirt.manifests.extra_specs import UnsupportedFeature
from tests.conformance.nova_oracle import nova_module
from tests.virt.kubevirt.samples import (
    EXTRAS,
    NET_B,
    SETTINGS,
    SUBNETS,
    flavor,
    image,
    port,
    server,
)

DOC = Path(__file__).parents[3] / "docs" / "kubevirt-support.md"
BEGIN, END = "<!-- support-table:begin -->", "<!-- support-table:end -->"


def _nova_extra_spec_names() -> list[str]:
    validators = nova_module("api.validation.extra_specs.validators")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        validators.load_validators()
    names = [re.sub(r"\{group\}", "", n) for n in validators.VALIDATORS]
    return [re.sub(r"\{[a-z]+\}", "X", n) for n in names]


def test_every_nova_extra_spec_has_a_row() -> None:
    missing = [n for n in _nova_extra_spec_names() if support.lookup(n, "flavor") is None]
    assert missing == []


def test_every_nova_image_property_has_a_row() -> None:
    image_meta = nova_module("objects.image_meta")
    fields = list(image_meta.ImageMetaProps.fields)
    missing = [f for f in fields if support.lookup(f, "image") is None]
    assert missing == []


def test_docs_table_matches_support_rows() -> None:
    text = DOC.read_text()
    generated = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert generated == support.render_markdown().strip()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("openkeel-6f70656e", "openkeel-6f70656e"),
        ("openkeel-Demo_Project", "openkeel-demo-project-c1a5d3b6"),
        ("x" * 70, "x" * 54 + "-" + "a1c1c3a4"),
    ],
)
def test_dns_labels(raw: str, expected: str) -> None:
    label = naming.dns_label(raw)
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", label) and len(label) <= 63
    assert label[: len(expected) - 8] == expected[: len(expected) - 8]


def test_namespace_scheme_and_collisions() -> None:
    assert naming.namespace_for("abc", "openkeel-{project_id}") == "openkeel-abc"
    assert naming.namespace_for("ABC", "tenant-{project_id}") != naming.namespace_for(
        "abc", "tenant-{project_id}"
    )
    assert naming.label_value("my flavor/1") != naming.label_value("my-flavor-1")


def test_network_data_matches_nova_schema() -> None:
    schema = json.loads(Path("/work/shared/spec/nova-api-schemas/network_data.json").read_text())
    document = networks.network_data((port(1), port(2, NET_B)), dict(SUBNETS))
    jsonschema.validate(document, schema)
    assert [n["type"] for n in document["networks"]] == ["ipv4_dhcp", "ipv4", "ipv6"]
    assert document["services"] == [
        {"type": "dns", "address": "10.0.0.2"},
        {"type": "dns", "address": "8.8.8.8"},
    ]


def test_netplan_for_nocloud() -> None:
    plan = networks.netplan_v2((port(1), port(2, NET_B)), dict(SUBNETS))
    assert plan["ethernets"]["nic1"] == {
        "match": {"macaddress": "fa:16:3e:00:00:02"},
        "dhcp4": False,
        "addresses": ["10.0.2.10/24", "fd00:2::10/64"],
        "routes": [
            {"to": "default", "via": "10.0.2.1"},
            {"to": "192.168.0.0/16", "via": "10.0.2.254"},
            {"to": "default", "via": "fd00:2::1"},
        ],
        "nameservers": {"addresses": ["8.8.8.8"]},
        "mtu": 1450,
    }


def test_meta_data_has_nova_fields() -> None:
    data = cloudinit.meta_data(server(), EXTRAS)
    assert data["uuid"] == server().uuid
    assert data["public_keys"] == {"demo-key": EXTRAS.key_pair.public_key}  # type: ignore[union-attr]
    assert set(data) == {
        "uuid",
        "meta",
        "public_keys",
        "keys",
        "hostname",
        "name",
        "launch_index",
        "availability_zone",
        "project_id",
        "devices",
    }


def test_image_forces_config_drive() -> None:
    built = vm.build_server(server(image=image(img_config_drive="mandatory")), SETTINGS)
    volumes = built.vm["spec"]["template"]["spec"]["volumes"]
    assert "cloudInitConfigDrive" in volumes[-1]


def test_instancetype_mode_refuses_explicit_topology() -> None:
    import dataclasses

    settings = dataclasses.replace(SETTINGS, use_instancetypes=True)
    with pytest.raises(UnsupportedFeature) as caught:
        vm.build_server(server(flavor=flavor(**{"hw:cpu_cores": "2"})), settings)
    assert caught.value.reason == "no explicit topology with instancetypes"


def test_instancetype_mode_refuses_image_changing_the_instancetype() -> None:
    import dataclasses

    settings = dataclasses.replace(SETTINGS, use_instancetypes=True)
    with pytest.raises(UnsupportedFeature) as caught:
        vm.build_server(server(image=image(hw_cpu_policy="dedicated")), settings)
    assert caught.value.key == "hw_cpu_policy"


def test_settings_from_conf() -> None:
    from openkeel.conf import make_config
    from openkeel.virt.kubevirt.manifests.settings import KubevirtSettings, settings_from_conf

    conf = make_config(overrides={"kubevirt.use_instancetypes": True})
    assert settings_from_conf(conf) == KubevirtSettings(use_instancetypes=True)

"""Volume types and extra specs of the embedded volume API, against the answers Cinder 29
gave on this machine (decision 0075): admin-only writes, ``default``, lookup by name or id,
in-use refusals, multiattach from the type, per-type quota resources."""

from __future__ import annotations

from tests.volume_api.conftest import Cinder, error

SHARED = {"multiattach": "<is> True"}


def _type(admin: Cinder, name: str, **attrs: object) -> dict[str, object]:
    made = admin("POST", "/types", {"volume_type": {"name": name, **attrs}})
    assert made.status_code == 200, made.text
    return dict(made.json()["volume_type"])


def test_default_type_and_listing(admin: Cinder, demo: Cinder) -> None:
    default = demo("GET", "/types/default").json()["volume_type"]
    assert default == {"id": default["id"], "name": "__DEFAULT__", "is_public": True,
                       "description": "Default Volume Type", "extra_specs": {}}  # fmt: skip
    private = _type(admin, "gold", description="d", **{"os-volume-type-access:is_public": False})
    assert private["os-volume-type-access:is_public"] is False and "qos_specs_id" not in private
    listed = {t["name"]: t for t in admin("GET", "/types").json()["volume_types"]}
    assert set(listed) == {"__DEFAULT__", "gold"}
    assert listed["gold"]["qos_specs_id"] is None
    every = admin("GET", "/types?is_public=None").json()["volume_types"]  # the CLI's lookup
    assert {t["name"] for t in every} == {"__DEFAULT__", "gold"}
    private_only = admin("GET", "/types?is_public=false").json()["volume_types"]
    assert [t["name"] for t in private_only] == ["gold"]
    seen = demo("GET", "/types").json()["volume_types"]
    assert [t["name"] for t in seen] == ["__DEFAULT__"] and "qos_specs_id" not in seen[0]
    assert error(demo("GET", f"/types/{private['id']}"), 404) == (
        f"Volume type {private['id']} could not be found."
    )
    assert error(demo("GET", "/types/nope"), 404) == "Volume type nope could not be found."
    shown = admin("GET", f"/types/{private['id']}").json()["volume_type"]
    assert shown["description"] == "d" and shown["is_public"] is False


def test_writes_are_an_administrators(admin: Cinder, demo: Cinder) -> None:
    assert error(demo("POST", "/types", {"volume_type": {"name": "x"}}), 403) == (
        "Policy doesn't allow volume_extension:type_create to be performed."
    )
    made = _type(admin, "silver", extra_specs=SHARED)
    assert made["extra_specs"] == SHARED
    assert error(admin("POST", "/types", {"volume_type": {"name": "silver"}}), 409) == (
        "Volume Type silver already exists."
    )
    assert error(admin("POST", "/types", {"volume_type": {"name": "y", "bad": 1}}), 400)
    path = f"/types/{made['id']}"
    assert error(demo("PUT", path, {"volume_type": {"description": "z"}}), 403)
    assert error(admin("PUT", path, {"volume_type": {}}), 400) == (
        "Specify volume type name, description, is_public or a combination thereof."
    )
    updated = admin("PUT", path, {"volume_type": {"description": "d2"}}).json()["volume_type"]
    assert updated["description"] == "d2" and "os-volume-type-access:is_public" not in updated
    assert error(demo("DELETE", path), 403)
    default_id = demo("GET", "/types/default").json()["volume_type"]["id"]
    assert error(admin("DELETE", f"/types/{default_id}"), 400) == (
        f"The volume type {default_id} is a default volume type and cannot be deleted."
    )
    assert admin("DELETE", path).status_code == 202
    assert error(admin("DELETE", path), 404) == f"Volume type {made['id']} could not be found."


def test_extra_specs(admin: Cinder, demo: Cinder) -> None:
    tid = _type(admin, "specs", extra_specs=SHARED)["id"]
    base = f"/types/{tid}/extra_specs"
    assert admin("POST", base, {"extra_specs": {"foo": "bar"}}).json() == {
        "extra_specs": {"foo": "bar"}
    }
    assert admin("GET", f"{base}/foo").json() == {"foo": "bar"}
    assert admin("PUT", f"{base}/foo", {"foo": "baz"}).json() == {"foo": "baz"}
    assert (
        error(admin("PUT", f"{base}/foo", {"other": "x"}), 400) == "Request body and URI mismatch"
    )
    assert demo("GET", base).json() == {"extra_specs": {**SHARED, "foo": "baz"}}
    assert error(demo("POST", base, {"extra_specs": {"a": "b"}}), 403)
    assert admin("DELETE", f"{base}/foo").status_code == 202
    assert error(admin("GET", f"{base}/foo"), 404) == (
        f"Volume Type {tid} has no extra specs with key foo."
    )
    cacheable = admin("POST", base, {"extra_specs": {"cacheable": "<is> True"}})
    assert error(cacheable, 400) == "cacheable cannot be set with multiattach."


def test_volumes_take_their_type(admin: Cinder, demo: Cinder) -> None:
    tid = _type(admin, "shared", extra_specs=SHARED)["id"]
    by_name = demo.volume(volume_type="shared")
    by_id = demo.volume(volume_type=tid)
    plain = demo.volume()
    assert (by_name["volume_type"], by_name["multiattach"]) == ("shared", True)
    assert (by_id["volume_type"], by_id["multiattach"]) == ("shared", True)
    assert (plain["volume_type"], plain["multiattach"]) == ("__DEFAULT__", False)
    shown = demo("GET", f"/volumes/{by_id['id']}", version="3.63").json()["volume"]
    assert shown["volume_type_id"] == tid
    unknown = demo("POST", "/volumes", {"volume": {"size": 1, "volume_type": "nope"}})
    assert error(unknown, 404) == "Volume type with name nope could not be found."
    flag = demo("POST", "/volumes", {"volume": {"size": 1, "multiattach": True}})
    assert error(flag, 400).startswith("multiattach parameter has been removed.")
    assert error(admin("DELETE", f"/types/{tid}"), 400) == "Target volume type is still in use."
    spec = admin("POST", f"/types/{tid}/extra_specs", {"extra_specs": {"a": "b"}})
    assert error(spec, 400) == "Volume Type is currently in use."
    project = demo("GET", "/volumes/detail").json()["volumes"][0]["os-vol-tenant-attr:tenant_id"]
    quota = demo("GET", f"/os-quota-sets/{project}?usage=true").json()["quota_set"]
    assert quota["volumes_shared"] == {"limit": -1, "in_use": 2, "reserved": 0}
    assert quota["gigabytes_shared"]["in_use"] == 2
    assert quota["volumes___DEFAULT__"]["in_use"] == 1
    assert quota["snapshots_shared"]["in_use"] == 0 and quota["volumes"]["in_use"] == 3

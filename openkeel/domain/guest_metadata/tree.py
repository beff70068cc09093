"""One server's metadata as paths: what the metadata service answers and what the config
drive holds (``openstack/<version>/...``, ``ec2/<version>/...``)."""

from __future__ import annotations

import base64
import json
import os
import posixpath
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from openkeel.domain.guest_metadata import ec2, network
from openkeel.domain.guest_metadata.record import GuestRecord
from openkeel.domain.guest_metadata.versions import (
    EC2_VERSIONS,
    GRIZZLY,
    HAVANA,
    LATEST,
    LIBERTY,
    NEWTON_ONE,
    NEWTON_TWO,
    OCATA,
    OPENSTACK_VERSIONS,
    ROCKY,
    VICTORIA,
    UnknownVersion,
    at_least,
    resolve,
)

TEXT = "text/plain"
JSON = "application/json"
PASSWORD = "password"


class NoSuchPath(LookupError):
    """Nothing lives at the path (the service answers 404)."""


@dataclass(frozen=True)
class Answer:
    """A document and its content type; ``password`` marks the password endpoint, which the
    service answers itself (GET the stored password, POST a new one)."""

    body: bytes
    content_type: str = TEXT
    password: bool = False


@dataclass(frozen=True)
class VendorData:
    """``static``: the StaticJSON provider's document (None when it is not configured);
    ``dynamic``: asks the DynamicJSON targets (``{name: document}``; empty when not
    configured). ``providers``: ``[api] vendordata_providers`` in order."""

    static: Mapping[str, Any] | None = None
    dynamic: Callable[[], Mapping[str, Any]] = dict
    providers: tuple[str, ...] = ("StaticJSON",)


def _json(document: Any) -> bytes:
    return json.dumps(document).encode()


class MetadataTree:
    """The documents of one server (``address``: the requester's, for EC2 ``local-ipv4``)."""

    def __init__(
        self,
        record: GuestRecord,
        vendor: VendorData | None = None,
        address: str | None = None,
        random_bytes: Callable[[int], bytes] = os.urandom,
    ) -> None:
        self.record = record
        self.vendor = vendor or VendorData()
        self.address = address
        self._random = random_bytes

    # --- OpenStack documents -------------------------------------------------------------

    def meta_data(self, version: str) -> dict[str, Any]:
        """meta_data.json at ``version``."""
        r = self.record
        data: dict[str, Any] = {"uuid": r.uuid}
        if r.meta:
            data["meta"] = dict(r.meta)
        if r.key is not None:
            data["public_keys"] = {r.key.name: r.key.data}
            data["keys"] = [{"name": r.key.name, "type": r.key.type, "data": r.key.data}]
        data["hostname"] = r.hostname
        data["name"] = r.name
        data["launch_index"] = r.launch_index
        data["availability_zone"] = r.availability_zone
        if at_least(GRIZZLY, version, OPENSTACK_VERSIONS):
            data["random_seed"] = base64.b64encode(self._random(512)).decode()
        if at_least(LIBERTY, version, OPENSTACK_VERSIONS):
            data["project_id"] = r.project_id
        if at_least(NEWTON_ONE, version, OPENSTACK_VERSIONS):
            data["devices"] = network.tagged_nics(
                r.network_info,
                with_vlan=at_least(OCATA, version, OPENSTACK_VERSIONS),
                with_trust=at_least(ROCKY, version, OPENSTACK_VERSIONS),
            )
        if at_least(VICTORIA, version, OPENSTACK_VERSIONS):
            data["dedicated_cpus"] = sorted(r.dedicated_cpus)
        return data

    def entries(self, version: str) -> list[str]:
        """What ``openstack/<version>/`` lists."""
        names = ["meta_data.json"]
        if self.record.user_data is not None:
            names.append("user_data")
        for since, name in ((GRIZZLY, PASSWORD), (HAVANA, "vendor_data.json"),
                            (LIBERTY, "network_data.json"), (NEWTON_TWO, "vendor_data2.json")):  # fmt: skip
            if at_least(since, version, OPENSTACK_VERSIONS):
                names.append(name)
        return names

    def vendor_data2(self) -> dict[str, Any]:
        """vendor_data2.json: ``static`` first, then each dynamic target's document (a name
        already present is dropped, as Nova drops it)."""
        document: dict[str, Any] = {}
        for provider in self.vendor.providers:
            if provider == "StaticJSON":
                document["static"] = dict(self.vendor.static or {})
            elif provider == "DynamicJSON":
                values = dict(self.vendor.dynamic())
                document.update({k: v for k, v in values.items() if k not in document})
        return document

    def _openstack(self, tokens: list[str]) -> Answer:
        try:
            version = resolve(tokens[0], OPENSTACK_VERSIONS)
        except UnknownVersion as exc:
            raise NoSuchPath(tokens[0]) from exc
        name = "/".join(tokens[1:])
        if not name:
            return Answer("\n".join(self.entries(version)).encode())
        if name not in self.entries(version) and name != "meta_data.json":
            raise NoSuchPath(name)
        if name == "meta_data.json":
            return Answer(_json(self.meta_data(version)), JSON)
        if name == "user_data":
            return Answer(base64.b64decode(self.record.user_data or ""))
        if name == PASSWORD:
            return Answer(self.record.password.encode(), password=True)
        if name == "network_data.json":
            return Answer(_json(network.network_data(self.record.network_info) or {}), JSON)
        if name == "vendor_data.json":
            if "StaticJSON" not in self.vendor.providers:
                raise NoSuchPath(name)
            return Answer(_json(dict(self.vendor.static or {})), JSON)
        return Answer(_json(self.vendor_data2()), JSON)

    # --- the service's paths ---------------------------------------------------------------

    def lookup(self, path: str, today: str = "9999-12-31") -> Answer:
        """The answer at ``path`` (``/openstack/...``, ``/ec2/...`` or an EC2 path without the
        prefix); NoSuchPath otherwise. Versions after ``today`` are hidden from listings."""
        tokens = posixpath.normpath("/" + path.lstrip("/")).split("/")[1:]
        if tokens[0] not in ("ec2", "openstack"):
            tokens = ["ec2"] if tokens == [""] else ["ec2", *tokens]
        if len(tokens) == 1:
            if tokens[0] == "openstack":
                shown = [v for v in OPENSTACK_VERSIONS if v <= today]
                return Answer("\n".join([*shown, LATEST]).encode())
            return Answer("\n".join([*EC2_VERSIONS, LATEST]).encode())
        if tokens[0] == "openstack":
            return self._openstack(tokens[1:])
        try:
            version = resolve(tokens[1], EC2_VERSIONS)
            return Answer(ec2.listing(ec2.find(ec2.ec2_data(self.record, version, self.address),
                                               tokens[2:])))  # fmt: skip
        except (UnknownVersion, KeyError) as exc:
            raise NoSuchPath(path) from exc

    # --- the config drive ------------------------------------------------------------------

    def config_drive_files(self, skip_ec2: tuple[str, ...] = ()) -> Iterator[tuple[str, bytes]]:
        """``(path, content)`` of every file of the config drive, as Nova lays it out; EC2
        versions in ``skip_ec2`` (``[api] config_drive_skip_versions``) are left out."""
        for version in (*EC2_VERSIONS, LATEST):
            if version in skip_ec2:
                continue
            data = ec2.ec2_data(self.record, version, self.address)
            if "user-data" in data:
                yield f"ec2/{version}/user-data", data["user-data"]
            meta = data["meta-data"]
            if "public-keys" in meta:
                meta["public-keys"]["0"].pop("_name", None)
            yield f"ec2/{version}/meta-data.json", _json(meta)
        for version in (*OPENSTACK_VERSIONS, LATEST):
            for name in self.entries(version):
                if name == PASSWORD:
                    continue
                if name == "vendor_data.json" and "StaticJSON" not in self.vendor.providers:
                    continue
                yield f"openstack/{version}/{name}", self._openstack([version, name]).body

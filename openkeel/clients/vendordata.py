"""Vendor data for the metadata service and config drive: the StaticJSON file and the
DynamicJSON targets (``[api] vendordata_dynamic_targets``, one POST per ``name@url`` target,
as Nova makes them).

Used by ``openkeel.metadata`` and the compute role's config drive. A target that fails or
answers something that is not JSON gives ``{}`` with a warning, or raises
:class:`VendordataError` with ``[api] vendordata_dynamic_failure_fatal``.
"""

from __future__ import annotations

import json
import logging
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from oslo_config import cfg

from openkeel.domain.guest_metadata.record import GuestRecord

LOG = logging.getLogger(__name__)
USER_AGENT = "openstack-nova-vendordata"


class VendordataError(RuntimeError):
    """A dynamic vendordata target failed and failures are fatal."""


@dataclass(frozen=True)
class VendordataSettings:
    """``[api]`` vendordata options."""

    providers: tuple[str, ...] = ("StaticJSON",)
    jsonfile_path: str | None = None
    targets: tuple[str, ...] = ()
    ssl_certfile: str = ""
    connect_timeout: float = 5
    read_timeout: float = 5
    failure_fatal: bool = False

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> VendordataSettings:
        api = conf.api
        return cls(
            providers=tuple(api.vendordata_providers),
            jsonfile_path=api.vendordata_jsonfile_path,
            targets=tuple(api.vendordata_dynamic_targets),
            ssl_certfile=api.vendordata_dynamic_ssl_certfile,
            connect_timeout=api.vendordata_dynamic_connect_timeout,
            read_timeout=api.vendordata_dynamic_read_timeout,
            failure_fatal=api.vendordata_dynamic_failure_fatal,
        )


def static_vendordata(settings: VendordataSettings) -> dict[str, Any] | None:
    """The StaticJSON document (``{}`` without a file); None when StaticJSON is not a
    provider. A missing or unparsable file raises (OSError, ValueError), as in Nova."""
    if "StaticJSON" not in settings.providers:
        return None
    if not settings.jsonfile_path:
        return {}
    try:
        with open(settings.jsonfile_path, "rb") as fp:
            data = json.load(fp)
    except (OSError, ValueError):
        LOG.warning("vendordata_jsonfile_path[%s]: cannot be read as JSON", settings.jsonfile_path)
        raise
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class VendordataRequest:
    """What a target is told about the server (Nova's request body)."""

    project_id: str
    instance_id: str
    image_id: str | None
    user_data: str | None
    hostname: str | None
    metadata: Mapping[str, str]
    boot_roles: str = ""

    @classmethod
    def for_record(cls, record: GuestRecord) -> VendordataRequest:
        return cls(project_id=record.project_id, instance_id=record.uuid,
                   image_id=record.image_ref, user_data=record.user_data,
                   hostname=record.hostname, metadata=record.meta, boot_roles=record.boot_roles)  # fmt: skip

    def body(self) -> dict[str, Any]:
        return {"project-id": self.project_id, "instance-id": self.instance_id,
                "image-id": self.image_id, "user-data": self.user_data,
                "hostname": self.hostname, "metadata": dict(self.metadata),
                "boot-roles": self.boot_roles}  # fmt: skip


class DynamicVendordata:
    """Asks the DynamicJSON targets about one server."""

    def __init__(self, settings: VendordataSettings, transport: httpx.BaseTransport | None = None) -> None:  # fmt: skip
        self.settings = settings
        self._transport = transport

    def fetch(self, request: VendordataRequest) -> dict[str, Any]:
        """``{name: document}`` for every well-formed target; a name given twice keeps the
        first."""
        documents: dict[str, Any] = {}
        for target in self.settings.targets:
            name, at, url = target.partition("@")
            if not at:
                LOG.warning("Vendordata target %s lacks a name. Skipping", target)
                continue
            if name in documents:
                LOG.warning("Vendordata already contains an entry named %s. Skipping", target)
                continue
            documents[name] = self._ask(name, url, request)
        return documents

    def _ask(self, name: str, url: str, request: VendordataRequest) -> Any:
        s = self.settings
        verify: bool | ssl.SSLContext = url.startswith("https://")
        if verify and s.ssl_certfile:
            verify = ssl.create_default_context(cafile=s.ssl_certfile)
        timeout = httpx.Timeout(s.read_timeout, connect=s.connect_timeout)
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": USER_AGENT}  # fmt: skip
        try:
            with httpx.Client(verify=verify, timeout=timeout, transport=self._transport) as client:
                response = client.post(url, content=json.dumps(request.body()), headers=headers)
                response.raise_for_status()
            return json.loads(response.text) if response.text else {}
        except (httpx.HTTPError, ValueError, TypeError) as exc:
            LOG.warning("Error from dynamic vendordata service %s at %s: %s", name, url, exc)
            if s.failure_fatal:
                raise VendordataError(f"vendordata target {name} at {url}: {exc}") from exc
            return {}

"""Who is asking: the Neutron metadata proxy's headers (``X-Instance-ID`` signed with
``[neutron] metadata_proxy_shared_secret``, ``X-Tenant-ID``) when ``[neutron]
service_metadata_proxy`` is set, else the requester's fixed IP address (from
``X-Forwarded-For`` with ``[oslo_middleware] enable_proxy_headers_parsing``).

Pure: raises :class:`MetadataHttpError` with Nova's status and explanation.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from dataclasses import dataclass
from typing import ClassVar

LOG = logging.getLogger(__name__)


class MetadataHttpError(Exception):
    """An error answer: status, title and explanation (webob's plain-text fault)."""

    TITLES: ClassVar[dict[int, str]] = {400: "Bad Request", 403: "Forbidden", 404: "Not Found", 409: "Conflict",
              500: "Internal Server Error"}  # fmt: skip

    def __init__(self, status: int, explanation: str = "") -> None:
        super().__init__(explanation)
        self.status = status
        self.explanation = explanation

    def body(self) -> bytes:
        title = self.TITLES.get(self.status, "Error")
        explanation = self.explanation or {404: "The resource could not be found.",
                                           409: "There was a conflict when trying to complete your request."}.get(self.status, "")  # fmt: skip
        return f"{self.status} {title}\n\n{explanation}\n\n   ".encode()


UNKNOWN_ERROR = "An unknown error has occurred. Please try your request again."


@dataclass(frozen=True)
class ProxySettings:
    """``[neutron]`` proxy options and ``[oslo_middleware] enable_proxy_headers_parsing``."""

    service_metadata_proxy: bool = False
    shared_secret: str = ""
    forwarded_for: bool = False


@dataclass(frozen=True)
class Requester:
    """By instance (proxy headers: ``instance_id``, ``tenant_id``) or by ``address``."""

    address: str | None
    instance_id: str | None = None
    tenant_id: str | None = None


def signature(secret: str, instance_id: str) -> str:
    """The X-Instance-ID-Signature the proxy sends for ``instance_id``."""
    return hmac.new(secret.encode(), instance_id.encode(), hashlib.sha256).hexdigest()


def _check_signature(secret: str, instance_id: str, given: str | None, address: str | None) -> None:  # fmt: skip
    if not given or not hmac.compare_digest(signature(secret, instance_id), given):
        LOG.warning("X-Instance-ID-Signature: %s does not match the expected signature for id: "
                    "%s. Request From: %s", given, instance_id, address)  # fmt: skip
        raise MetadataHttpError(403, "Invalid proxy request signature.")


def _single(headers: list[tuple[str, str]], name: str) -> list[str]:
    return [v for k, v in headers if k == name]


def identify(settings: ProxySettings, headers: list[tuple[str, str]], client: str | None) -> Requester:  # fmt: skip
    """The requester of a request with ``headers`` (lower-cased names, repeats kept) from
    ``client`` (the peer address)."""
    forwarded = _single(headers, "x-forwarded-for")
    if not settings.service_metadata_proxy:
        if _single(headers, "x-instance-id"):
            LOG.warning("X-Instance-ID present in request headers. The 'service_metadata_proxy' "
                        "option must be enabled to process this header.")  # fmt: skip
        if settings.forwarded_for and forwarded:
            client = forwarded[0].split(",")[0].strip()
        return Requester(client)
    if _single(headers, "x-metadata-provider"):
        provider = _single(headers, "x-metadata-provider")[0]
        raise MetadataHttpError(400, f"Could not find any subnets for provider {provider}")
    instance_ids = _single(headers, "x-instance-id")
    tenant_ids = _single(headers, "x-tenant-id")
    signatures = _single(headers, "x-instance-id-signature")
    message = None
    if not instance_ids:
        message = "X-Instance-ID header is missing from request."
    elif not signatures:
        message = "X-Instance-ID-Signature header is missing from request."
    elif not tenant_ids:
        message = "X-Tenant-ID header is missing from request."
    elif len(instance_ids) > 1:
        message = "Multiple X-Instance-ID headers found within request."
    elif len(tenant_ids) > 1:
        message = "Multiple X-Tenant-ID headers found within request."
    if message:
        raise MetadataHttpError(400, message)
    address = forwarded[0] if forwarded else None
    _check_signature(settings.shared_secret, instance_ids[0], signatures[0], address)
    return Requester(address, instance_ids[0], tenant_ids[0])

"""The volume adapter over a real Cinder's v3 REST API (``[openkeel_volume] backend = cinder``).

Plain keystoneauth1 requests, not openstacksdk's block-storage proxy nor python-cinderclient
(decision 0068). Found as Nova finds Cinder: ``[cinder] endpoint_template`` (``%(project_id)s``
filled in with the user's project), else ``catalog_info`` (``<service_type>:<service_name>:
<interface>``, default ``volumev3::publicURL``) in ``os_region_name`` of the service catalog of
the ``[cinder]`` auth section's user. A request carries the user's token when the context has
one (Nova's calls are the user's); a context without a token (compute's periodic and cleanup
work, an admin context) is served by the ``[cinder]`` service user. Every request asks for
microversion 3.44 (the attachments API with ``os-complete``), ``os-reimage`` for 3.68 (as
Nova's ``reimage_volume``); ``http_retries`` is the connection
retries of every call (Nova's ``connect_retries``).

Errors are the embedded adapter's (:mod:`openkeel.volume.errors`), so the compute API answers
the same 4xx: Cinder's 404 the caller's NotFound (an attachment already gone is no error for
``attachment_delete``), 400 and 409 ``InvalidVolume`` with Cinder's message, 413
``VolumeOverQuota``, other 4xx ``VolumeServiceError``; 5xx and no answer ``CinderUnavailable``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

from keystoneauth1 import exceptions as ksa_exceptions
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ksa_session
from oslo_config import cfg

from openkeel.conf.cinder import GROUP
from openkeel.conf.keystoneauth import load_auth
from openkeel.domain.errors import ServiceUnavailable
from openkeel.volume import errors
from openkeel.volume.adapter import (
    AttachmentInfo,
    NewVolume,
    SnapshotInfo,
    VolumeContext,
    VolumeInfo,
    VolumeType,
)

Doc = dict[str, Any]

MICROVERSION = "3.44"
REIMAGE_MICROVERSION = "3.68"  # os-reimage
_INTERFACES = {"publicURL": "public", "internalURL": "internal", "adminURL": "admin"}


class CinderUnavailable(ServiceUnavailable):
    """Cinder could not be reached, or answered with a server error."""


class _Missing(Exception):
    """Cinder's 404 where the caller tells from its message what was missing."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _fault(content: bytes) -> str:
    """Cinder's fault message (``{"itemNotFound": {"code": 404, "message": ...}}``)."""
    text = content.decode("utf-8", "replace")
    try:
        body = json.loads(content)
    except ValueError:
        return text
    if isinstance(body, dict):
        for value in body.values():
            if isinstance(value, dict) and "message" in value:
                return str(value["message"])
    return text


def _bool(value: Any) -> bool:
    """Cinder's booleans (``bootable`` is the string ``"true"``)."""
    return value is True or str(value).lower() == "true"


def _volume(doc: Doc) -> VolumeInfo:
    attachments = tuple(
        AttachmentInfo(a.get("server_id"), str(a.get("attachment_id") or a.get("id")),
                       a.get("device"))
        for a in doc.get("attachments") or ()
    )  # fmt: skip
    return VolumeInfo(
        id=doc["id"], status=doc["status"], size=int(doc["size"]),
        multiattach=_bool(doc.get("multiattach")),
        availability_zone=doc.get("availability_zone") or "",
        bootable=_bool(doc.get("bootable")), attachments=attachments, name=doc.get("name"),
        description=doc.get("description"), created_at=doc.get("created_at"),
        volume_type=doc.get("volume_type"), snapshot_id=doc.get("snapshot_id"),
        metadata=dict(doc.get("metadata") or {}),
        # an admin-only attribute of Cinder's volume view: None for a user's token
        migration_status=doc.get("os-vol-mig-status-attr:migstat"),
        image_id=(doc.get("volume_image_metadata") or {}).get("image_id"),
    )  # fmt: skip


def _snapshot(doc: Doc) -> SnapshotInfo:
    return SnapshotInfo(
        id=doc["id"], volume_id=doc["volume_id"], status=doc["status"], size=int(doc["size"]),
        created_at=doc.get("created_at"), name=doc.get("name"),
        description=doc.get("description"),
    )  # fmt: skip


def _connection_info(attachment: Doc) -> dict[str, Any]:
    """The attachment's connection info in the shape hosts read (Nova's, as before the
    attachments API): ``driver_volume_type`` and ``data`` (the rest of Cinder's flat
    ``connection_info``), with the attachment's id, status, instance and mode beside them."""
    flat = dict(attachment.get("connection_info") or {})
    if not flat:
        return {}
    flat.pop("attachment_id", None)
    info: dict[str, Any] = {"driver_volume_type": flat.pop("driver_volume_type", None),
                            "data": flat, "attachment_id": attachment.get("id")}  # fmt: skip
    for key in ("status", "instance", "attach_mode", "volume_id", "attached_at"):
        info[key] = attachment.get(key)
    return info


class CinderVolumes:
    """:class:`openkeel.volume.adapter.VolumeAdapter` over Cinder's v3 API."""

    def __init__(self, conf: cfg.ConfigOpts, session: ksa_session.Session | None = None) -> None:
        group = conf[GROUP]
        self._auth = load_auth(conf, GROUP)
        self._session = session or ks_loading.load_session_from_conf_options(
            conf, GROUP, auth=self._auth
        )
        self._template: str | None = group.endpoint_template
        service_type, service_name, interface = group.catalog_info.split(":")
        self._where = {
            "service_type": service_type, "service_name": service_name or None,
            "interface": _INTERFACES.get(interface, interface),
            "region_name": group.os_region_name,
        }  # fmt: skip
        self._retries: int = group.http_retries
        self._lock = threading.Lock()
        self._catalog_url: str | None = None

    # -- transport

    def _service_endpoint(self) -> str:
        """Cinder's URL in the service user's catalog (looked up once)."""
        with self._lock:
            if self._catalog_url is None:
                if self._auth is None:
                    raise CinderUnavailable(
                        "Cinder cannot be located: set [cinder] endpoint_template or the "
                        "[cinder] auth section (auth_type and its options)"
                    )
                try:
                    url = self._session.get_endpoint(auth=self._auth, **self._where)
                except ksa_exceptions.ClientException as exc:
                    raise CinderUnavailable(f"Cinder not found in the catalog: {exc}") from exc
                if not url:
                    raise CinderUnavailable(
                        f"No {self._where['service_type']} endpoint in the service catalog"
                    )
                self._catalog_url = url.rstrip("/")
            return self._catalog_url

    def _endpoint(self, context: VolumeContext) -> str:
        if self._template:
            return (self._template % {"project_id": context.project_id}).rstrip("/")
        url = self._service_endpoint()
        # An endpoint with a project id (…/v3/<project>) names the service user's project in
        # its catalog; a user's call goes to the user's project, as the user's catalog says.
        own = self._auth.get_project_id(self._session) if self._auth is not None else None
        if context.auth_token and own and context.project_id and url.endswith("/" + own):
            url = url[: -len(own)] + context.project_id
        return url

    def _request(
        self,
        context: VolumeContext,
        method: str,
        path: str,
        body: Doc | None = None,
        version: str = MICROVERSION,
    ) -> tuple[int, bytes]:
        """Cinder's status and body (the response is closed: nothing of it outlives the call,
        not even in an error's traceback)."""
        headers = {"OpenStack-API-Version": f"volume {version}",
                   "Accept": "application/json"}  # fmt: skip
        kwargs: dict[str, Any] = {}
        if self._auth is not None:
            # Nova's service token (``[service_user] send_service_user_token``): Cinder lets a
            # service delete an attachment of a server without asking Nova (CVE-2023-2088).
            try:
                headers["X-Service-Token"] = self._auth.get_token(self._session)
            except ksa_exceptions.ClientException as exc:
                raise CinderUnavailable(f"[cinder] service user: no token: {exc}") from exc
        if context.auth_token:
            headers["X-Auth-Token"] = context.auth_token
            kwargs["authenticated"] = False
        elif self._auth is None:
            raise CinderUnavailable(
                "No user token and no [cinder] auth section to call Cinder with"
            )
        try:
            resp = self._session.request(
                self._endpoint(context) + path, method, json=body, headers=headers,
                raise_exc=False, connect_retries=self._retries, **kwargs,
            )  # fmt: skip
        except ksa_exceptions.ClientException as exc:
            raise CinderUnavailable(f"Cinder not reachable: {exc}") from exc
        try:
            return int(resp.status_code), bytes(resp.content)
        finally:
            resp.close()

    def _call(
        self,
        context: VolumeContext,
        method: str,
        path: str,
        missing: Exception | None,
        body: Doc | None = None,
        version: str = MICROVERSION,
    ) -> Doc:
        status, content = self._request(context, method, path, body, version)
        if status >= 500:
            raise CinderUnavailable(f"Cinder answered {status} to {method} {path}: {_fault(content)}")  # fmt: skip
        if status == 404:
            raise missing or _Missing(_fault(content))
        if status == 413:
            raise errors.VolumeOverQuota(_fault(content))
        if status in (400, 409):
            raise errors.InvalidVolume(_fault(content).removeprefix("Invalid input received: "))
        if status >= 400:
            raise errors.VolumeServiceError(f"Cinder answered {status}: {_fault(content)}")
        if status == 204 or not content:
            return {}
        out: Doc = json.loads(content)
        return out

    def _as_project(self, context: VolumeContext) -> str:
        """The list query of a call without the user's token: the service user is an admin,
        so it asks for the context's project explicitly."""
        if context.auth_token or not context.project_id:
            return ""
        return f"?all_tenants=1&project_id={context.project_id}"

    def close(self) -> None:
        """Close the session's pooled connections."""
        self._session.session.close()

    # -- volumes

    def get(self, context: VolumeContext, volume_id: str) -> VolumeInfo:
        doc = self._call(context, "GET", f"/volumes/{volume_id}", errors.VolumeNotFound(volume_id))
        return _volume(doc["volume"])

    def list_volumes(self, context: VolumeContext) -> list[VolumeInfo]:
        found = self._call(context, "GET", "/volumes/detail" + self._as_project(context),
                           errors.VolumeNotFound(""))  # fmt: skip
        return [_volume(doc) for doc in found["volumes"]]

    def create_volume(self, context: VolumeContext, wanted: NewVolume) -> VolumeInfo:
        body = {
            "size": wanted.size, "name": wanted.name, "description": wanted.description,
            "snapshot_id": wanted.snapshot_id, "volume_type": wanted.volume_type,
            "imageRef": wanted.image_id, "metadata": dict(wanted.metadata or {}),
            "availability_zone": wanted.availability_zone,
        }  # fmt: skip
        try:
            made = self._call(context, "POST", "/volumes", None,
                              {"volume": {k: v for k, v in body.items() if v is not None}})  # fmt: skip
        except _Missing as exc:
            # the snapshot asked for, or another reference (a volume type): a bad request
            if wanted.snapshot_id and exc.message.startswith("Snapshot"):
                raise errors.SnapshotNotFound(wanted.snapshot_id) from None
            raise errors.InvalidVolume(exc.message) from None
        return _volume(made["volume"])

    def delete(self, context: VolumeContext, volume_id: str) -> None:
        self._call(context, "DELETE", f"/volumes/{volume_id}", errors.VolumeNotFound(volume_id))

    def volume_types(self, context: VolumeContext) -> list[VolumeType]:
        """Cinder's ``GET /types`` (the types the user may use)."""
        found = self._call(context, "GET", "/types", errors.VolumeServiceError("no types"))
        return [VolumeType(str(t["id"]), str(t["name"])) for t in found.get("volume_types") or ()]

    def _action(self, context: VolumeContext, volume_id: str, action: str) -> None:
        self._call(context, "POST", f"/volumes/{volume_id}/action", errors.VolumeNotFound(volume_id),
                   {action: {}})  # fmt: skip

    def begin_detaching(self, context: VolumeContext, volume_id: str) -> None:
        self._action(context, volume_id, "os-begin_detaching")

    def roll_detaching(self, context: VolumeContext, volume_id: str) -> None:
        self._action(context, volume_id, "os-roll_detaching")

    def migrate_volume_completion(
        self, context: VolumeContext, old_volume_id: str, new_volume_id: str, error: bool
    ) -> str:
        # Cinder's os-migrate_volume_completion is admin-only: Nova makes it as its [cinder]
        # user whatever the context (cinderclient(context, admin=True)).
        as_service = VolumeContext(context.project_id, context.user_id, is_admin=True)
        done = self._call(as_service, "POST", f"/volumes/{old_volume_id}/action",
                          errors.VolumeNotFound(old_volume_id),
                          {"os-migrate_volume_completion": {"new_volume": new_volume_id,
                                                            "error": error}})  # fmt: skip
        return str(done["save_volume_id"])

    def reimage(
        self, context: VolumeContext, volume_id: str, image_id: str, reimage_reserved: bool
    ) -> None:
        """Nova's ``reimage_volume``: the ``os-reimage`` action at Cinder's 3.68."""
        body = {"os-reimage": {"image_id": image_id, "reimage_reserved": reimage_reserved}}
        try:
            self._call(context, "POST", f"/volumes/{volume_id}/action", None, body,
                       version=REIMAGE_MICROVERSION)  # fmt: skip
        except _Missing as exc:  # the volume's 404 or the image's
            if exc.message.startswith("Image "):
                raise errors.ImageNotFound(image_id) from None
            raise errors.VolumeNotFound(volume_id) from None

    # -- attachments (3.44)

    def attachment_create(self, context: VolumeContext, volume_id: str, instance_uuid: str) -> str:
        made = self._call(context, "POST", "/attachments", errors.VolumeNotFound(volume_id),
                          {"attachment": {"volume_uuid": volume_id,
                                          "instance_uuid": instance_uuid}})  # fmt: skip
        return str(made["attachment"]["id"])

    def attachment_create_connected(
        self,
        context: VolumeContext,
        volume_id: str,
        instance_uuid: str,
        connector: Mapping[str, Any],
    ) -> tuple[str, dict[str, Any]]:
        made = self._call(context, "POST", "/attachments", errors.VolumeNotFound(volume_id),
                          {"attachment": {"volume_uuid": volume_id, "instance_uuid": instance_uuid,
                                          "connector": dict(connector)}})  # fmt: skip
        return str(made["attachment"]["id"]), self._connected(context, made["attachment"])

    def attachment_update(
        self, context: VolumeContext, attachment_id: str, connector: Mapping[str, Any]
    ) -> dict[str, Any]:
        made = self._call(context, "PUT", f"/attachments/{attachment_id}",
                          errors.AttachmentNotFound(attachment_id),
                          {"attachment": {"connector": dict(connector)}})  # fmt: skip
        return self._connected(context, made["attachment"])

    def _connected(self, context: VolumeContext, attachment: Doc) -> dict[str, Any]:
        info = _connection_info(attachment)
        volume_id = attachment.get("volume_id")
        if info and volume_id:
            volume = self.get(context, str(volume_id))
            if volume.multiattach:
                info["multiattach"] = True  # as Nova's compute, which reads the volume for it
            # The size, beside Cinder's data: a KubeVirt host's static PV (decision 0080).
            info["size_gb"] = volume.size
        return info

    def attachment_complete(self, context: VolumeContext, attachment_id: str) -> None:
        self._call(context, "POST", f"/attachments/{attachment_id}/action",
                   errors.AttachmentNotFound(attachment_id), {"os-complete": None})  # fmt: skip

    def attachment_delete(self, context: VolumeContext, attachment_id: str) -> None:
        try:
            self._call(context, "DELETE", f"/attachments/{attachment_id}",
                       errors.AttachmentNotFound(attachment_id))  # fmt: skip
        except errors.AttachmentNotFound:
            return

    # -- snapshots

    def get_snapshot(self, context: VolumeContext, snapshot_id: str) -> SnapshotInfo:
        doc = self._call(context, "GET", f"/snapshots/{snapshot_id}",
                         errors.SnapshotNotFound(snapshot_id))  # fmt: skip
        return _snapshot(doc["snapshot"])

    def list_snapshots(self, context: VolumeContext) -> list[SnapshotInfo]:
        found = self._call(context, "GET", "/snapshots/detail" + self._as_project(context),
                           errors.SnapshotNotFound(""))  # fmt: skip
        return [_snapshot(doc) for doc in found["snapshots"]]

    def create_snapshot(
        self,
        context: VolumeContext,
        volume_id: str,
        name: str | None,
        description: str | None,
        force: bool,
    ) -> SnapshotInfo:
        body = {"volume_id": volume_id, "name": name, "description": description, "force": force}
        made = self._call(context, "POST", "/snapshots", errors.VolumeNotFound(volume_id),
                          {"snapshot": body})  # fmt: skip
        return _snapshot(made["snapshot"])

    def delete_snapshot(self, context: VolumeContext, snapshot_id: str) -> None:
        self._call(
            context, "DELETE", f"/snapshots/{snapshot_id}", errors.SnapshotNotFound(snapshot_id)
        )

"""Handlers of os-instance_usage_audit_log: the last completed period's audit, now (index) or
before a given time (show, ``YYYY-MM-DD HH:MM:SS[.ffffff]``)."""

from __future__ import annotations

import datetime
from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.usage_audit_log import audit_log
from openkeel.domain.errors import Invalid

POLICY = "os_compute_api:os-instance-usage-audit-log:%s"


def list_audit_logs(req: ApiRequest) -> dict[str, Any]:
    """GET /os-instance_usage_audit_log."""
    req.context.can(POLICY % "list", target={})
    return {"instance_usage_audit_logs": audit_log(req.services, None)}


def show_audit_log(req: ApiRequest) -> dict[str, Any]:
    """GET /os-instance_usage_audit_log/{before}."""
    req.context.can(POLICY % "show", target={})
    text = req.params["id"]
    fmt = "%Y-%m-%d %H:%M:%S.%f" if "." in text else "%Y-%m-%d %H:%M:%S"
    try:
        before = datetime.datetime.strptime(text, fmt)
    except ValueError:
        raise Invalid(f"Invalid timestamp for date {text}") from None
    return {"instance_usage_audit_log": audit_log(req.services, before)}

"""Handlers of ``/os-quota-sets``: show, detail, defaults, update and delete a project's quotas."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.quota_sets import views
from openkeel.api.usecases.quotas import QuotaEngine, update_limits

POLICY = "os_compute_api:os-quota-sets:%s"
_TRUE = {"1", "t", "true", "on", "y", "yes"}


def _authorize(req: ApiRequest, action: str) -> str:
    project_id = req.params["id"]
    req.context.can(POLICY % action, {"project_id": project_id})
    return project_id


def _user_id(req: ApiRequest, last: bool = False) -> str | None:
    # Nova reads the first value with parse_qs, but the last with webob (detail).
    values = req.query.get("user_id")
    if not values:
        return None
    return values[-1] if last else values[0]


def show_quota_set(req: ApiRequest) -> dict[str, Any]:
    """The limits of the project, or of one user in it (``?user_id=``)."""
    project_id = _authorize(req, "show")
    limits = QuotaEngine(req.services).limits(project_id, _user_id(req))
    return views.quota_set(req, limits, project_id)


def show_quota_set_detail(req: ApiRequest) -> dict[str, Any]:
    """Limits with usage (``in_use``) and ``reserved`` (always 0)."""
    project_id = _authorize(req, "detail")
    details = QuotaEngine(req.services).details(project_id, _user_id(req, last=True))
    return views.detail(req, details, project_id)


def show_quota_set_defaults(req: ApiRequest) -> dict[str, Any]:
    """The limits a project gets when none are set for it."""
    project_id = _authorize(req, "defaults")
    return views.quota_set(req, QuotaEngine(req.services).defaults(), project_id)


def update_quota_set(req: ApiRequest) -> dict[str, Any]:
    """Set limits; each must cover current usage unless ``force`` is true."""
    project_id = _authorize(req, "update")
    user_id = _user_id(req)
    requested = req.body["quota_set"]
    force = str(requested.get("force", "False")).lower() in _TRUE
    engine = QuotaEngine(req.services)
    update_limits(engine, project_id, user_id, requested, force)
    return views.quota_set(req, engine.limits(project_id, user_id), None)


def delete_quota_set(req: ApiRequest) -> None:
    """Revert the project (or one user) to the default limits."""
    project_id = _authorize(req, "delete")
    QuotaEngine(req.services).delete_limits(project_id, _user_id(req))

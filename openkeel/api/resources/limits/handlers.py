"""Handler of ``GET /limits``."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.limits import views
from openkeel.api.usecases.quotas import QuotaEngine

POLICY = "os_compute_api:limits"
OTHER_PROJECT_POLICY = "os_compute_api:limits:other_project"


def show_limits(req: ApiRequest) -> dict[str, Any]:
    """The caller's project limits, or another project's with ``?tenant_id=`` (admin)."""
    req.context.can(POLICY, target={})
    project_id = req.context.project_id or ""
    if "tenant_id" in req.query:
        project_id = req.query["tenant_id"][-1]
        req.context.can(OTHER_PROJECT_POLICY)
    return views.limits(req, QuotaEngine(req.services).details(project_id))

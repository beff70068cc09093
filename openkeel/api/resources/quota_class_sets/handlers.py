"""Handlers of ``/os-quota-class-sets``: show and update a quota class."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest
from openkeel.api.resources.quota_class_sets import views
from openkeel.api.usecases.quotas import QuotaEngine
from openkeel.domain.errors import Invalid

POLICY = "os_compute_api:os-quota-class-sets:%s"
_MAX_NAME = 255


def show_quota_class_set(req: ApiRequest) -> dict[str, Any]:
    """The class's limits (the ``[quota]`` options where the class sets none)."""
    req.context.can(POLICY % "show", target={})
    class_name = req.params["id"]
    return views.quota_class_set(
        req, QuotaEngine(req.services).class_limits(class_name), class_name
    )


def update_quota_class_set(req: ApiRequest) -> dict[str, Any]:
    """Set limits of the class (``default`` changes every project's defaults)."""
    req.context.can(POLICY % "update", target={})
    class_name = req.params["id"]
    if len(class_name) > _MAX_NAME:
        raise Invalid(f"quota_class_name has {len(class_name)} characters, more than {_MAX_NAME}.")
    engine = QuotaEngine(req.services)
    values = {k: int(v) for k, v in req.body["quota_class_set"].items()}
    engine.set_class_limits(class_name, values)
    return views.quota_class_set(req, engine.class_limits(class_name), None)

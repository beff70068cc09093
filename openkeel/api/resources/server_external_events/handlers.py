"""Handler of POST /os-server-external-events: the events as sent, each with its ``status`` and
``code``; 200 when all were accepted, else 207."""

from __future__ import annotations

from typing import Any

from openkeel.api.request import ApiRequest, Reply
from openkeel.api.usecases.external_events import create_events


def create_external_events(req: ApiRequest) -> Reply:
    """POST /os-server-external-events."""
    events: list[dict[str, Any]] = [dict(e) for e in req.body["events"]]
    answers, all_accepted = create_events(req.services, req.context, events)
    for event, answer in zip(events, answers, strict=True):
        event["status"], event["code"] = answer.status, answer.code
    return Reply({"events": events}, 200 if all_accepted else 207)

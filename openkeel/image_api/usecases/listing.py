"""``GET /v2/images``: Glance's filters, sort orders and marker paging over the visible images.

Called by the ``images`` resource. Filters: ``name``, ``status``, ``id``, ``container_format``,
``disk_format`` (each also as ``in:a,b``), ``visibility`` (default: everything listed but
community images of others), ``owner``, ``tag`` (repeatable, all must match), ``member_status``
(default ``accepted``), ``size_min``/``size_max``, ``protected``, ``os_hidden`` (default false) and
any other key as a custom property. Sort: ``sort=key:dir,...`` or ``sort_key``/``sort_dir``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openkeel.clients.image import Caller, Image
from openkeel.image_api.faults import BadRequest
from openkeel.image_api.services import ImageApiServices
from openkeel.image_api.usecases.image_schema import MEMBER_STATUSES, VISIBILITIES

DEFAULT_LIMIT = 25
MAX_LIMIT = 1000
SORT_KEYS = (
    "name", "status", "container_format", "disk_format", "size", "virtual_size", "id",
    "created_at", "updated_at", "visibility", "owner", "min_ram", "min_disk",
)  # fmt: skip
IN_FILTERS = ("name", "status", "id", "container_format", "disk_format")
PAGING = ("limit", "marker", "sort", "sort_key", "sort_dir")


@dataclass
class Page:
    """One page of images and the query that continues it (None on the last page)."""

    images: list[Image]
    next_query: list[tuple[str, str]] | None = None


@dataclass
class ListQuery:
    """The parsed query string."""

    filters: dict[str, list[str]] = field(default_factory=dict)
    limit: int = DEFAULT_LIMIT
    marker: str | None = None
    sort: list[tuple[str, str]] = field(default_factory=list)


def _integer(name: str, text: str, minimum: int = 0) -> int:
    try:
        value = int(text)
    except ValueError as exc:
        raise BadRequest(f"{name} param must be an integer") from exc
    if value < minimum:
        raise BadRequest(f"{name} param must be positive")
    return value


def _sort(query: list[tuple[str, str]]) -> list[tuple[str, str]]:
    combined = [v for k, v in query if k == "sort"]
    keys = [v for k, v in query if k == "sort_key"]
    dirs = [v for k, v in query if k == "sort_dir"]
    if combined and (keys or dirs):
        raise BadRequest("The 'sort' parameter cannot be combined with 'sort_key' or 'sort_dir'.")
    if combined:
        pairs = []
        for item in ",".join(combined).split(","):
            key, _, direction = item.strip().partition(":")
            pairs.append((key, direction or "desc"))
    else:
        if len(dirs) > 1 and len(dirs) != len(keys):
            raise BadRequest("The number of sort_dir values must match the number of sort_key.")
        default = dirs[0] if len(dirs) == 1 else "desc"
        pairs = [(key, dirs[i] if len(dirs) > 1 else default) for i, key in enumerate(keys)]
        if not keys and dirs:
            pairs = [("created_at", dirs[0])]
    for key, direction in pairs:
        if key not in SORT_KEYS:
            raise BadRequest(f"Invalid sort key: {key}. It must be one of: {', '.join(SORT_KEYS)}.")
        if direction not in ("asc", "desc"):
            raise BadRequest(f"Invalid sort direction: {direction}")
    keys_seen = [key for key, _ in pairs]
    return pairs + [(k, "desc") for k in ("created_at", "id") if k not in keys_seen]


def parse_query(query: list[tuple[str, str]]) -> ListQuery:
    """The list query (400 on a bad limit, sort or filter value)."""
    parsed = ListQuery(sort=_sort(query))
    for key, value in query:
        if key == "limit":
            parsed.limit = min(_integer("limit", value), MAX_LIMIT)
        elif key == "marker":
            parsed.marker = value
        elif key not in PAGING:
            parsed.filters.setdefault(key, []).append(value)
    visibility = parsed.filters.get("visibility", ["all"])[-1]
    if visibility not in (*VISIBILITIES, "all"):
        raise BadRequest(f"Invalid visibility value: {visibility}")
    member_status = parsed.filters.get("member_status", ["accepted"])[-1]
    if member_status not in (*MEMBER_STATUSES, "all"):
        raise BadRequest(f"Invalid status value: {member_status}")
    for bound in ("size_min", "size_max"):
        for value in parsed.filters.get(bound, []):
            _integer(bound, value)
    return parsed


def _boolean(text: str) -> bool:
    lowered = text.lower()
    if lowered not in ("true", "false", "1", "0", "yes", "no", "on", "off"):
        raise BadRequest(f"Invalid boolean value: {text}")
    return lowered in ("true", "1", "yes", "on")


def _listed(
    caller: Caller, image: Image, membership: str | None, visibility: str, member_status: str
) -> bool:
    """Visibility and membership rules of a list (not of a show)."""
    own = image.owner is not None and image.owner == caller.project_id
    if visibility != "all" and image.visibility != visibility:
        return False
    if image.visibility == "community":
        return own or caller.is_admin or visibility == "community"
    if image.visibility == "shared" and not own:
        if membership is None:
            return caller.is_admin
        return member_status in ("all", membership)
    return image.visibility == "public" or own or caller.is_admin


def _matches(image: Image, key: str, values: list[str]) -> bool:
    if key in ("visibility", "member_status"):
        return True
    if key == "tag":
        return all(tag in image.tags for tag in values)
    if key in ("size_min", "size_max"):
        bound = int(values[-1])
        size = image.size or 0
        return image.size is not None and (size >= bound if key == "size_min" else size <= bound)
    if key in ("protected", "os_hidden"):
        return bool(getattr(image, key)) == _boolean(values[-1])
    value = values[-1]
    if key in IN_FILTERS and value.startswith("in:"):
        return str(getattr(image, key)) in value[3:].split(",")
    if key in ("name", "status", "owner", "id", "container_format", "disk_format"):
        return str(getattr(image, key)) == value
    if key in ("min_ram", "min_disk", "size", "virtual_size"):
        return str(getattr(image, key)) == value
    return key in image.properties and str(image.properties[key]) == value


def _sort_key(key: str) -> Callable[[Image], Any]:
    """Unset values first (ascending); an empty string still compares as a string."""

    def value(image: Image) -> tuple[bool, Any]:
        found = getattr(image, key)
        return (found is not None, found if found is not None else 0)

    return value


def list_images(services: ImageApiServices, caller: Caller, query: list[tuple[str, str]]) -> Page:
    """One page of the images the caller may list, filtered and sorted."""
    parsed = parse_query(query)
    visibility = parsed.filters.get("visibility", ["all"])[-1]
    member_status = parsed.filters.get("member_status", ["accepted"])[-1]
    memberships = services.repository.memberships(caller.project_id)
    filters = dict(parsed.filters)
    filters.setdefault("os_hidden", ["false"])
    images = [
        image
        for image in services.repository.images()
        if _listed(caller, image, memberships.get(image.id), visibility, member_status)
        and all(_matches(image, key, values) for key, values in filters.items())
    ]
    for key, direction in reversed(parsed.sort):
        images.sort(key=_sort_key(key), reverse=direction == "desc")
    if parsed.marker is not None:
        ids = [image.id for image in images]
        if parsed.marker not in ids:
            raise BadRequest(f"Invalid marker. Image {parsed.marker} could not be found.")
        images = images[ids.index(parsed.marker) + 1 :]
    page = Page(images[: parsed.limit])
    if len(images) > parsed.limit and page.images:
        kept = [(k, v) for k, v in query if k != "marker"]
        page.next_query = [*kept, ("marker", page.images[-1].id)]
    return page

"""Routes of the /images proxy: all gone (404) after 2.35, Nova's proxy API cap."""

from __future__ import annotations

from openkeel.api.resources.images import handlers, schemas
from openkeel.api.routing import RouteTable, endpoint
from openkeel.api.validation import Versioned

# The last microversion of Nova's proxy APIs (MAX_PROXY_API_SUPPORT_VERSION).
MAX_PROXY = "2.35"

INDEX_QUERY = Versioned.of(("2.1", schemas.INDEX_QUERY_V21))
SHOW_QUERY = Versioned.of(("2.1", schemas.SHOW_QUERY_V21))


def register(table: RouteTable) -> None:
    """Add the /images routes to ``table``."""
    table.add("GET", "/images", endpoint(handlers.list_images, until=MAX_PROXY, query=INDEX_QUERY))
    table.add(
        "GET",
        "/images/detail",
        endpoint(handlers.list_images_detail, until=MAX_PROXY, query=INDEX_QUERY),
    )
    table.add(
        "GET", "/images/{id}", endpoint(handlers.show_image, until=MAX_PROXY, query=SHOW_QUERY)
    )
    table.add("DELETE", "/images/{id}", endpoint(handlers.delete_image, 204, until=MAX_PROXY))

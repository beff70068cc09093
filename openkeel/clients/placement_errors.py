"""Errors of the Placement client; raised ``from`` the HTTP error that caused them.

Callers (scheduler, conductor, compute resource tracker) catch these, never httpx's.
"""

from __future__ import annotations

CONCURRENT_UPDATE = "placement.concurrent_update"
CONSUMER_GENERATION_MARKER = "consumer generation conflict"


class PlacementError(Exception):
    """Any failure talking to Placement."""

    def __init__(self, message: str, *, status: int = 0, code: str = "", detail: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.detail = detail


class PlacementUnavailable(PlacementError):
    """Placement could not be reached or answered 5xx: transient, worth retrying later."""


class PlacementBadRequest(PlacementError):
    """Placement rejected the request (400): a bug in the caller."""


class PlacementNotFound(PlacementError):
    """A 404 for something other than a resource provider."""


class ResourceProviderNotFound(PlacementNotFound):
    """The resource provider does not exist."""


class PlacementConflict(PlacementError):
    """Any 409 answer."""


class ResourceProviderGenerationConflict(PlacementConflict):
    """Another writer changed the provider; retries ran out."""


class ConsumerGenerationConflict(PlacementConflict):
    """Another writer changed the consumer's allocations since we read them."""


class AllocationConflict(PlacementConflict):
    """The allocation does not fit: capacity exhausted, min/max unit or step size violated."""


class InventoryInUse(PlacementConflict):
    """An inventory cannot be removed or shrunk below what is allocated."""

"""Neutron's error answers: ``{"NeutronError": {"type", "message", "detail"}}``."""

from __future__ import annotations

from typing import Any


class NetworkFault(Exception):
    """An error answered as Neutron answers it; ``kind`` is Neutron's exception name."""

    status = 500
    kind = "InternalServerError"

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if kind is not None:
            self.kind = kind

    def body(self) -> dict[str, Any]:
        return {"NeutronError": {"type": self.kind, "message": self.message, "detail": ""}}


class BadRequest(NetworkFault):
    status, kind = 400, "HTTPBadRequest"


class InvalidInput(BadRequest):
    kind = "InvalidInput"

    def __init__(self, error: str) -> None:
        super().__init__(f"Invalid input for operation: {error}.")


class Unauthorized(NetworkFault):
    status, kind = 401, "HTTPUnauthorized"


class PolicyNotAuthorized(NetworkFault):
    status, kind = 403, "PolicyNotAuthorized"

    def __init__(self, action: str) -> None:
        super().__init__(f"({action}) is disallowed by policy")


class NotFound(NetworkFault):
    status, kind = 404, "HTTPNotFound"


class MethodNotAllowed(NetworkFault):
    status, kind = 405, "HTTPMethodNotAllowed"


class Conflict(NetworkFault):
    status, kind = 409, "Conflict"


class RequestEntityTooLarge(NetworkFault):
    status, kind = 413, "HTTPRequestEntityTooLarge"


def not_found(resource: str, ident: str) -> NotFound:
    """Neutron's words for an unknown (or invisible) resource of each kind."""
    words = {
        "network": ("NetworkNotFound", f"Network {ident} could not be found."),
        "subnet": ("SubnetNotFound", f"Subnet {ident} could not be found."),
        "port": ("PortNotFound", f"Port {ident} could not be found."),
        "security_group": ("SecurityGroupNotFound", f"Security group {ident} does not exist"),
        "security_group_rule": (
            "SecurityGroupRuleNotFound", f"Security group rule {ident} does not exist"),
        "floatingip": ("FloatingIPNotFound", f"Floating IP {ident} could not be found"),
        "qos_policy": ("QosPolicyNotFound", f"QoS policy {ident} could not be found."),
        "qos_rule": ("QosRuleNotFound", f"QoS rule {ident} could not be found."),
        "router": ("RouterNotFound", f"Router {ident} could not be found"),
    }  # fmt: skip
    kind, message = words[resource]
    return NotFound(message, kind)

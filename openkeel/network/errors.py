"""Errors of the network adapters, with Nova's messages.

The servers API calls ``validate_networks`` while creating a server: Nova answers 400 for all of
these there, so they are ``Invalid`` (400) here; compute turns them into build failures.
"""

from __future__ import annotations

from openkeel.domain.errors import Conflict, Invalid, NotFound, OverQuota


class NetworkError(Invalid):
    """Base of the network adapter errors."""


class NetworkNotFound(NetworkError):
    def __init__(self, network_id: str) -> None:
        super().__init__(f"Network {network_id} could not be found.")


class PortNotFound(NetworkError):
    def __init__(self, port_id: str) -> None:
        super().__init__(f"Port id {port_id} could not be found.")


class FixedIpAlreadyInUse(NetworkError):
    """Nova names the holding instance only when the caller can see it."""

    def __init__(self, address: str, instance_uuid: str | None = None) -> None:
        if instance_uuid is None:
            super().__init__(f"Fixed IP {address} is already in use.")
        else:
            super().__init__(
                f"Fixed IP address {address} is already in use on instance {instance_uuid}."
            )


class InvalidFixedIp(NetworkError):
    def __init__(self, address: str) -> None:
        super().__init__(f"{address} is not a valid IP v4/6 address.")


class FixedIpNotInNetwork(NetworkError):
    def __init__(self, address: str, network_id: str) -> None:
        super().__init__(f"Fixed IP {address} is not a valid ip address for network {network_id}.")


class InvalidFixedIpAndMaxCountRequest(NetworkError):
    def __init__(self, reason: str) -> None:
        super().__init__(f"Failed to launch instances: {reason}")


class NoMoreFixedIps(NetworkError):
    def __init__(self, network: str) -> None:
        super().__init__(f"No fixed IP addresses available for network: {network}")


class SecurityGroupNotFound(NetworkError):
    """Nova's SecurityGroupNotFound as raised by its Neutron lookup (the client's message)."""

    def __init__(self, name_or_id: str) -> None:
        super().__init__(f"Unable to find security_group with name or id '{name_or_id}'")


class PortInUse(Conflict):
    """The port is bound to another server (409, as Nova answers it)."""

    def __init__(self, port_id: str) -> None:
        super().__init__(f"Port {port_id} is still in use.")


class MultiplePortsNotApplicable(NetworkError):
    def __init__(self) -> None:
        super().__init__(
            "Failed to launch instances: Unable to launch multiple instances with a single "
            "configured port ID. Please launch your instance one by one with different ports."
        )


class SecurityGroupNotUnique(Conflict):
    """Several of the project's groups have that name (Nova's NoUniqueMatch, 409)."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"Multiple security_group matches found for name '{name}', use an ID to be more "
            "specific."
        )


class InstanceSecurityGroupNotFound(NotFound):
    """A server's security group operation found nothing to act on (Nova's 404 there)."""


class SecurityGroupCannotBeApplied(NetworkError):
    def __init__(self) -> None:
        super().__init__(
            "Network requires port_security_enabled and subnet associated in order to apply "
            "security groups."
        )


class InterfaceAttachFailedNoNetwork(NetworkError):
    def __init__(self, project_id: str) -> None:
        super().__init__(
            f"No specific network was requested and none are available for project '{project_id}'."
        )


class NetworkAmbiguous(NetworkError):
    def __init__(self) -> None:
        super().__init__("Multiple possible networks found, use a Network ID to be more specific.")


class UnableToAutoAllocateNetwork(NetworkError):
    def __init__(self, project_id: str) -> None:
        super().__init__(f"Unable to automatically allocate a network for project {project_id}")


class NetworkRequiresSubnet(NetworkError):
    def __init__(self, network_id: str) -> None:
        super().__init__(f"Network {network_id} requires a subnet in order to boot instances on.")


class PortRequiresFixedIP(NetworkError):
    def __init__(self, port_id: str) -> None:
        super().__init__(f"Port {port_id} requires a FixedIP in order to be used.")


class PortLimitExceeded(OverQuota):
    """Nova's PortLimitExceeded is a quota error (403 at the API)."""

    def __init__(self, message: str = "Maximum number of ports exceeded") -> None:
        super().__init__(message)


class PortBindingFailed(NetworkError):
    def __init__(self, port_id: str) -> None:
        super().__init__(
            f"Binding failed for port {port_id}, please check neutron logs for more information."
        )


class PortBindingDeletionFailed(NetworkError):
    def __init__(self, port_ids: str, host: str) -> None:
        super().__init__(
            f"Failed to delete binding for port(s) {port_ids} on host {host}; please check "
            "neutron logs for more information"
        )


class PortBindingActivationFailed(NetworkError):
    def __init__(self, port_id: str, host: str) -> None:
        super().__init__(
            f"Failed to activate binding for port {port_id} on host {host}; please check "
            "neutron logs for more information"
        )


# --- the proxies (os-security-groups, os-floating-ips) and the fixed/floating IP actions -------
# Named after Nova's exceptions; the API's use cases give each the status Nova's controller
# answers it with.


class SecurityGroupMissing(NotFound):
    """Nova's SecurityGroupNotFound as its proxy raises it (Neutron's words)."""


class SecurityGroupInvalid(Invalid):
    """What Neutron refuses in a group or rule (Nova's Invalid, with Neutron's words)."""


class SecurityGroupLimitExceeded(OverQuota):
    """Neutron's 409 on a group or rule create (over quota, a second ``default``)."""


class FloatingIpNotFound(NotFound):
    def __init__(self, floating_ip_id: str) -> None:
        super().__init__(f"Floating IP not found for ID {floating_ip_id}.")


class FloatingIpNotFoundForAddress(NotFound):
    def __init__(self, address: str) -> None:
        super().__init__(f"Floating IP not found for address {address}.")


class FloatingIpPoolNotFound(NotFound):
    def __init__(self) -> None:
        super().__init__("Floating IP pool not found.")


class NoMoreFloatingIps(NotFound):
    def __init__(self, detail: str = "Zero floating IPs available.") -> None:
        super().__init__(detail)


class FloatingIpLimitExceeded(OverQuota):
    def __init__(self, detail: str = "Maximum number of floating IPs exceeded") -> None:
        super().__init__(detail)


class FloatingIpBadRequest(Invalid):
    """Neutron's 400 on a floating IP create (its words)."""


class FloatingIpAssociateFailed(Invalid):
    """Neutron's 409 on an association (its words)."""


class NetworkNotFoundForInstance(NotFound):
    def __init__(self, instance_uuid: str) -> None:
        super().__init__(f"Network could not be found for instance {instance_uuid}.")


class FixedIpNotFoundForInstance(NotFound):
    def __init__(self, instance_uuid: str, address: str) -> None:
        super().__init__(f"Instance {instance_uuid} does not have fixed IP '{address}'.")


def floating_ip_refused(kind: str, status: int, message: str) -> Exception | None:
    """Nova's error for a floating IP Neutron would not create (``NeutronError.type``, status
    and words), None for what Nova does not translate."""
    if kind in ("IpAddressGenerationFailure", "ExternalIpAddressExhausted"):
        return NoMoreFloatingIps(message)
    if kind == "OverQuota":
        return FloatingIpLimitExceeded(message)
    if status == 400:
        return FloatingIpBadRequest(message)
    return None

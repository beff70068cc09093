"""Errors raised by virt drivers; compute decides what each means for the instance.

``TransientDriverError`` means "retry may succeed" (API timeouts, conflicts on the hypervisor
side); ``PermanentDriverError`` means the operation cannot succeed as asked (the instance goes
to ERROR with a fault). ``NotSupported`` means the driver lacks the feature: the API answers as
Nova does for a ``NotImplementedError`` from the driver (usually 501 or 400/409 by operation).
"""

from __future__ import annotations


class DriverError(Exception):
    """Base of every error a virt driver raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class TransientDriverError(DriverError):
    """The operation failed but may succeed if retried unchanged."""


class PermanentDriverError(DriverError):
    """The operation cannot succeed as requested; retrying will not help."""


class NotSupported(PermanentDriverError):
    """This driver does not implement the operation (Nova: NotImplementedError)."""

    def __init__(self, operation: str, driver: str) -> None:
        super().__init__(f"{operation} is not supported by the {driver} driver")
        self.operation = operation
        self.driver = driver


class GuestAgentNotEnabled(PermanentDriverError):
    """The guest has no agent to act on the request (Nova: InstanceAgentNotEnabled)."""

    def __init__(self, instance_uuid: str) -> None:
        super().__init__(f"Guest agent is not enabled for instance {instance_uuid}.")
        self.instance_uuid = instance_uuid


class AdminPasswordNotSupported(PermanentDriverError):
    """The guest cannot have its password set this way (Nova: SetAdminPasswdNotSupported)."""


class InstanceNotFound(PermanentDriverError):
    """The guest does not exist on this host (Nova: InstanceNotFound)."""

    def __init__(self, instance_uuid: str) -> None:
        super().__init__(f"Instance {instance_uuid} could not be found.")
        self.instance_uuid = instance_uuid


class InstanceExists(PermanentDriverError):
    """spawn() was asked for a guest that exists with a different definition."""

    def __init__(self, instance_uuid: str) -> None:
        super().__init__(f"Instance {instance_uuid} already exists.")
        self.instance_uuid = instance_uuid


class InvalidGuestState(PermanentDriverError):
    """The guest's power state forbids the operation (e.g. unpause a running guest)."""

    def __init__(self, instance_uuid: str, operation: str, state: str) -> None:
        super().__init__(f"Cannot {operation} instance {instance_uuid} while it is {state}.")
        self.instance_uuid = instance_uuid
        self.operation = operation
        self.state = state


class MigrationAborted(PermanentDriverError):
    """A live migration was cancelled by live_migration_abort()."""

    def __init__(self, instance_uuid: str) -> None:
        super().__init__(f"Live migration of instance {instance_uuid} was aborted.")
        self.instance_uuid = instance_uuid

"""changePassword for KubeVirt: the guest agent sets user passwords from a Secret.

Mixed into KubevirtDriver. A VM built from an image with ``hw_qemu_guest_agent`` carries a
``userPassword`` access credential (propagation ``qemuGuestAgent``) whose Secret maps user
names to passwords; KubeVirt applies a change of that Secret to the running guest. Without
that credential the guest has no agent to ask: GuestAgentNotEnabled, Nova's answer (409) for a
libvirt guest whose image does not enable the agent. The user is ``os_admin_user``-less
Nova's default, ``root``.
"""

from __future__ import annotations

import base64

from openkeel.virt import errors
from openkeel.virt.kubevirt import client as k
from openkeel.virt.kubevirt.base import KubevirtBase, driver_error
from openkeel.virt.kubevirt.client import JsonObj, KubeError
from openkeel.virt.model import InstanceRef

ADMIN_USER = "root"


def password_secret(vm: JsonObj) -> str | None:
    """The Secret of the VM's guest-agent password credential, if it has one."""
    credentials = vm["spec"]["template"]["spec"].get("accessCredentials") or []
    for credential in credentials:
        password = credential.get("userPassword") or {}
        if "qemuGuestAgent" in (password.get("propagationMethod") or {}):
            name = ((password.get("source") or {}).get("secret") or {}).get("secretName")
            if name:
                return str(name)
    return None


class PasswordMixin(KubevirtBase):
    """set_admin_password through the guest agent's access credentials."""

    def set_admin_password(self, instance: InstanceRef, new_password: str) -> None:
        name = password_secret(self._require_vm(instance))
        if name is None:
            raise errors.GuestAgentNotEnabled(instance.uuid)
        encoded = base64.b64encode(new_password.encode()).decode()

        def mutate(secret: JsonObj) -> None:
            secret["data"] = {**(secret.get("data") or {}), ADMIN_USER: encoded}

        try:
            self.client.update(k.SECRETS, name, mutate, self._ns(instance))
        except k.NotFoundError as exc:
            raise errors.GuestAgentNotEnabled(instance.uuid) from exc
        except KubeError as exc:
            raise driver_error(exc) from exc


__all__ = ["ADMIN_USER", "PasswordMixin", "password_secret"]

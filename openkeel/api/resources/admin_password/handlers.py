"""Handler of ``changePassword`` (202 once the guest has the password): 404 unknown server,
403 policy, 409 locked, wrong state or refused by the guest, 501 when the driver cannot."""

from __future__ import annotations

from openkeel.api.request import ApiRequest
from openkeel.api.usecases.guest_requests import GuestRequests

POLICY = "os_compute_api:os-admin-password"


def change_password(req: ApiRequest) -> None:
    """changePassword (policy target: the server's project and user)."""
    requests = GuestRequests(req.services, req.context)
    found = requests.find(req.params["id"])
    requests.authorize(POLICY, found, with_user=True)
    requests.change_password(found, req.body["changePassword"]["adminPass"])

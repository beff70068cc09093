"""Key pair use cases: list, show, create (generate or import) and delete, with Nova's
policy checks, ``key_pairs`` quota and error messages. Called by the os-keypairs handlers.

Each method costs one or two SQL statements; only generation does expensive work (RSA).
"""

from __future__ import annotations

from dataclasses import dataclass

from openkeel.api.context import RequestContext
from openkeel.api.services import ApiServices
from openkeel.db.repositories.keypairs import KeyPairQuotaFigures, KeyPairRepository, NewKeyPair
from openkeel.domain import keypairs as domain
from openkeel.domain.errors import Invalid, NotFound, OverQuota
from openkeel.domain.keypairs import KeyPair

POLICY_ROOT = "os_compute_api:os-keypairs:%s"
QUOTA_RESOURCE = "key_pairs"
OVER_QUOTA_MESSAGE = "Quota exceeded, too many key pairs."
NOOP_QUOTA_DRIVERS = ("nova.quota.NoopQuotaDriver", "nova.quota.UnifiedLimitsDriver")


@dataclass(frozen=True)
class CreateKeyPair:
    """A create request: generate when ``public_key`` is None, else import it."""

    name: str
    key_type: str = domain.SSH
    public_key: str | None = None
    owner_id: str | None = None


@dataclass(frozen=True)
class CreatedKeyPair:
    """The stored key pair and, when generated, its private key (returned once)."""

    keypair: KeyPair
    private_key: str | None


def _effective_limit(figures: KeyPairQuotaFigures, conf_default: int) -> int:
    # Nova's DbQuotaDriver for a user-only counted resource: the project limit is the
    # project row, else the 'default' class row, else the option; the user limit is the
    # project-user row, else the project limit; the check uses the smaller of the two,
    # so -1 (unlimited) on either side wins.
    default = figures.default_limit if figures.default_limit is not None else conf_default
    project = figures.project_limit if figures.project_limit is not None else default
    user = figures.user_limit if figures.user_limit is not None else project
    return min(project, user)


def _over(limit: int, wanted: int) -> bool:
    return 0 <= limit < wanted


class KeyPairService:
    """Key pairs as seen by one caller."""

    def __init__(self, services: ApiServices, context: RequestContext) -> None:
        self._conf = services.conf
        self._repo = KeyPairRepository(services.api_db)
        self._context = context
        self._notifier = services.notifier

    def _owner(self, action: str, owner_id: str | None) -> str:
        """The user whose key pairs are addressed, once the policy allows it."""
        owner = owner_id or self._context.user_id or ""
        self._context.can(POLICY_ROOT % action, target={"user_id": owner})
        return owner

    def list(
        self, owner_id: str | None, limit: int | None = None, marker: str | None = None
    ) -> list[KeyPair]:
        """The owner's key pairs by name; Invalid (400) for an unknown marker."""
        owner = self._owner("index", owner_id)
        found = self._repo.list(owner, limit, marker)
        if found is None:
            raise Invalid(f"Marker {marker} could not be found.")
        return found

    def get(self, name: str, owner_id: str | None = None) -> KeyPair:
        """Key pair ``name`` of the owner; NotFound with Nova's message."""
        owner = self._owner("show", owner_id)
        keypair = self._repo.get(owner, name)
        if keypair is None:
            raise NotFound(f"Keypair {name} not found for user {owner}")
        return keypair

    def delete(self, name: str, owner_id: str | None = None) -> None:
        """Delete key pair ``name`` of the owner; NotFound with Nova's message."""
        owner = self._owner("delete", owner_id)
        found = self._repo.get(owner, name) if self._notifier.enabled else None
        if found is not None:
            self._notifier.keypair("delete", "start", found, self._context.project_id)
        if not self._repo.delete(owner, name):
            raise NotFound(f"Keypair {name} not found for user {owner}")
        if found is not None:
            self._notifier.keypair("delete", "end", found, self._context.project_id)

    def create(self, command: CreateKeyPair) -> CreatedKeyPair:
        """Import or generate a key pair, within the owner's ``key_pairs`` quota."""
        owner = self._owner("create", command.owner_id)
        limit = self._check_quota(owner)
        if command.public_key is not None:
            material = domain.KeyMaterial(
                command.public_key, domain.fingerprint(command.public_key, command.key_type)
            )
        else:
            material = domain.generate(command.key_type, owner)
        new = NewKeyPair(
            command.name, owner, command.key_type, material.public_key, material.fingerprint
        )
        action = "import" if command.public_key is not None else "create"
        # Nova's start payload is the key pair not yet stored (no id, no time).
        draft = domain.KeyPair(
            0,
            command.name,
            owner,
            material.fingerprint,
            material.public_key,
            command.key_type,
            None,
        )
        self._notifier.keypair(action, "start", draft, self._context.project_id)
        keypair = self._repo.create(new)
        self._notifier.keypair(action, "end", keypair, self._context.project_id)
        if material.private_key is not None:
            self._recheck_quota(keypair, limit)
        return CreatedKeyPair(keypair, material.private_key)

    def _check_quota(self, owner: str) -> int | None:
        """Raise OverQuota when one more key would exceed the limit; return the limit
        (None when quotas are not enforced)."""
        if self._conf.quota.driver in NOOP_QUOTA_DRIVERS:
            return None
        figures = self._repo.quota_figures(
            owner, self._context.project_id, self._context.user_id, QUOTA_RESOURCE
        )
        limit = _effective_limit(figures, self._conf.quota.key_pairs)
        if _over(limit, figures.in_use + 1):
            raise OverQuota(OVER_QUOTA_MESSAGE)
        return limit

    def _recheck_quota(self, keypair: KeyPair, limit: int | None) -> None:
        # Nova re-counts after storing a generated key so that racing creates cannot
        # overshoot the limit; the import path has no recheck in Nova.
        if limit is None or limit < 0 or not self._conf.quota.recheck_quota:
            return
        if _over(limit, self._repo.count(keypair.user_id)):
            self._repo.delete(keypair.user_id, keypair.name)
            raise OverQuota(OVER_QUOTA_MESSAGE)

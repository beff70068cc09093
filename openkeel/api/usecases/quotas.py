"""The quota engine: limits, usage counts and atomic check-and-claim over the API and cell DBs.

Called by the quota-sets, quota-class-sets and limits handlers, and by every use case that
creates a counted resource (key pairs, server groups, servers).

Limit resolution (``[quota] driver = nova.quota.DbQuotaDriver``), as in Nova: the user's limit
(``project_user_quotas``) > the project's limit (``quotas``) > the ``default`` quota class
(``quota_classes``) > the ``[quota]`` option. ``NoopQuotaDriver`` makes everything unlimited
(-1, usage -1). ``UnifiedLimitsDriver`` (limits in Keystone) is not supported: every call raises
NotImplementedYet.

Concurrency: Nova counts, creates, then re-counts and deletes what it created when the
recheck fails. Here :meth:`QuotaEngine.claim` is one transaction on the API DB instead: it
locks one row per (scope, resource) of the claim (see ``openkeel.db.repositories.quotas``),
counts, checks, and yields the connection so the caller inserts its row *before* the lock is
released at commit. Concurrent claims for the same scope therefore queue and each sees the
others' rows. Resources counted in a cell DB (instances, cores, ram) must be written to that
cell inside the ``with`` block (or, for servers, represented by an API-DB row such as a build
request written on the yielded connection) so the next claimant counts them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

from openkeel.api.services import ApiServices
from openkeel.db.engine import reader
from openkeel.db.repositories import quotas as repo
from openkeel.domain.errors import Invalid, NotImplementedYet
from openkeel.domain.quotas import (
    CONF_OPTION,
    COUNTED,
    PER_PROJECT,
    RESOURCES,
    USER_COUNTED,
    QuotaDetail,
    QuotaExceeded,
    Settable,
    is_unlimited,
)

DB_DRIVER = "nova.quota.DbQuotaDriver"
NOOP_DRIVER = "nova.quota.NoopQuotaDriver"
UNIFIED_DRIVER = "nova.quota.UnifiedLimitsDriver"
DEFAULT_CLASS = "default"
_INSTANCE_RESOURCES = frozenset({"instances", "cores", "ram"})


def _sum(a: int, b: int) -> int:
    return -1 if is_unlimited(a) or is_unlimited(b) else a + b


def _sub(a: int, b: int) -> int:
    return -1 if is_unlimited(a) or is_unlimited(b) else a - b


def _strictest(a: int, b: int) -> int:
    if is_unlimited(a):
        return b
    return a if is_unlimited(b) else min(a, b)


class QuotaEngine:
    """Quota limits and usage for one deployment (built from ``req.services``)."""

    def __init__(self, services: ApiServices) -> None:
        self._conf = services.conf
        self._api_db: sa.Engine = services.api_db
        self._cell_dbs: Mapping[str, sa.Engine] = services.cell_dbs or {}
        self.driver: str = self._conf.quota.driver
        if self.driver == UNIFIED_DRIVER:
            raise NotImplementedYet(
                "The unified limits quota driver (nova.quota.UnifiedLimitsDriver) is not "
                "supported; use nova.quota.DbQuotaDriver or nova.quota.NoopQuotaDriver."
            )

    @property
    def noop(self) -> bool:
        """True when quotas are disabled (every limit is -1)."""
        return self.driver == NOOP_DRIVER

    # --- limits ------------------------------------------------------------------------------

    def config_defaults(self) -> dict[str, int]:
        """The ``[quota]`` option values (-1 for resources without an option)."""
        group = self._conf.quota
        return {r: -1 if opt is None else int(group[opt]) for r, opt in CONF_OPTION.items()}

    def _unlimited(self) -> dict[str, int]:
        return dict.fromkeys(RESOURCES, -1)

    def defaults(self) -> dict[str, int]:
        """The ``default`` quota class over the options (what a new project gets)."""
        if self.noop:
            return self._unlimited()
        with reader(self._api_db).connect() as conn:
            return self._defaults(conn)

    def _defaults(self, conn: sa.Connection) -> dict[str, int]:
        merged = self.config_defaults()
        merged.update(self._known(repo.class_limits(conn, DEFAULT_CLASS)))
        return merged

    @staticmethod
    def _known(values: Mapping[str, int]) -> dict[str, int]:
        return {k: v for k, v in values.items() if k in CONF_OPTION}

    def class_limits(self, class_name: str) -> dict[str, int]:
        """A quota class's limits over the options (Nova's ``get_class_quotas``)."""
        if self.noop:
            return self._unlimited()
        with reader(self._api_db).connect() as conn:
            merged = self.config_defaults()
            merged.update(self._known(repo.class_limits(conn, class_name)))
            return merged

    def set_class_limits(self, class_name: str, values: Mapping[str, int]) -> None:
        """Store class limits (also under the noop driver, as Nova does)."""
        with self._api_db.begin() as conn:
            for resource, limit in values.items():
                repo.set_class_limit(conn, class_name, resource, limit)

    def limits(self, project_id: str, user_id: str | None = None) -> dict[str, int]:
        """Limits in force for the project, or for one user in it."""
        if self.noop:
            return self._unlimited()
        with reader(self._api_db).connect() as conn:
            return self._limits(conn, project_id, user_id)

    def _limits(self, conn: sa.Connection, project_id: str, user_id: str | None) -> dict[str, int]:
        merged = self._defaults(conn)
        merged.update(self._known(repo.project_limits(conn, project_id)))
        if user_id is not None:
            merged.update(self._known(repo.user_limits(conn, project_id, user_id)))
        return merged

    def set_limits(self, project_id: str, user_id: str | None, values: Mapping[str, int]) -> None:
        """Store project limits, or user limits (per-project-only resources go to the project)."""
        with self._api_db.begin() as conn:
            for resource, limit in values.items():
                if user_id and resource not in PER_PROJECT:
                    repo.set_user_limit(conn, project_id, user_id, resource, limit)
                else:
                    repo.set_project_limit(conn, project_id, resource, limit)

    def delete_limits(self, project_id: str, user_id: str | None = None) -> None:
        """Revert the project (and its users), or one user, to the defaults."""
        with self._api_db.begin() as conn:
            if user_id:
                repo.delete_user_limits(conn, project_id, user_id)
            else:
                repo.delete_project_limits(conn, project_id)

    # --- usage -------------------------------------------------------------------------------

    def count_usage(
        self,
        project_id: str,
        user_id: str | None,
        resources: frozenset[str] | set[str],
        *,
        conn: sa.Connection | None = None,
        group_uuid: str | None = None,
    ) -> repo.Scoped:
        """Current usage of the counted ``resources`` for the project and the user.

        ``conn`` (an API-DB connection) lets a claim count inside its own transaction.
        ``server_group_members`` needs ``group_uuid``; cell DBs missing from
        ``services.cell_dbs`` count as empty.
        """
        if conn is None:
            with reader(self._api_db).connect() as own:
                return self.count_usage(
                    project_id, user_id, resources, conn=own, group_uuid=group_uuid
                )
        project: dict[str, int] = {}
        user: dict[str, int] = {}
        if resources & _INSTANCE_RESOURCES:
            counted = self._count_instances(project_id, user_id)
            pending = repo.count_unscheduled(conn, project_id, user_id)
            project.update({k: v + pending.project[k] for k, v in counted.project.items()})
            user.update({k: v + pending.user.get(k, 0) for k, v in counted.user.items()})
        if "server_groups" in resources:
            groups = repo.count_server_groups(conn, project_id, user_id)
            project.update(groups.project)
            user.update(groups.user)
        if "key_pairs" in resources and user_id:
            user["key_pairs"] = repo.count_key_pairs(conn, user_id)
        if "server_group_members" in resources and user_id and group_uuid:
            user["server_group_members"] = repo.count_group_members(conn, group_uuid, user_id)
        return repo.Scoped(project, user)

    def _count_instances(self, project_id: str, user_id: str | None) -> repo.Scoped:
        project = {"instances": 0, "cores": 0, "ram": 0}
        user = dict(project) if user_id else {}
        for engine in self._cell_dbs.values():
            # A read-only transaction: it must not queue behind the cell's writers.
            with reader(engine).connect() as cell:
                counted = repo.count_instances(cell, project_id, user_id)
            for key, value in counted.project.items():
                project[key] += value
            for key, value in counted.user.items():
                user[key] += value
        return repo.Scoped(project, user)

    def usages(self, project_id: str, user_id: str | None = None) -> dict[str, int]:
        """Usage as the quota-set detail and limits APIs show it (Nova's ``_get_usages``).

        Per-user resources (key pairs, server group members) always show 0, as in Nova.
        """
        counted = self.count_usage(project_id, user_id, set(COUNTED - USER_COUNTED))
        scoped = counted.user if user_id else counted.project
        return {r: scoped.get(r, 0) if r not in USER_COUNTED else 0 for r in RESOURCES}

    def details(self, project_id: str, user_id: str | None = None) -> dict[str, QuotaDetail]:
        """Limit, usage and (always 0; -1 under noop) reservations per resource."""
        if self.noop:
            return {r: QuotaDetail(-1, -1, -1) for r in RESOURCES}
        limits = self.limits(project_id, user_id)
        used = self.usages(project_id, user_id)
        return {r: QuotaDetail(limits[r], used[r], 0) for r in RESOURCES}

    def settable(self, project_id: str, user_id: str | None = None) -> dict[str, Settable]:
        """The range each limit may be set to without ``force`` (Nova's ``get_settable_quotas``)."""
        if self.noop:
            return {r: Settable(0, -1) for r in RESOURCES}
        with reader(self._api_db).connect() as conn:
            project = self._limits(conn, project_id, None)
            totals = repo.user_limit_totals(conn, project_id)
            own = repo.user_limits(conn, project_id, user_id) if user_id else {}
        remains = {r: project[r] - totals.get(r, 0) for r in RESOURCES}
        used = self.usages(project_id, user_id)
        if user_id:
            return {r: Settable(used[r], _sum(remains[r], own.get(r, 0))) for r in RESOURCES}
        return {r: Settable(max(_sub(project[r], remains[r]), used[r]), -1) for r in RESOURCES}

    # --- enforcement -------------------------------------------------------------------------

    def check(
        self,
        project_id: str,
        user_id: str | None,
        deltas: Mapping[str, int],
        *,
        group_uuid: str | None = None,
        message: str | None = None,
    ) -> None:
        """Raise QuotaExceeded if adding ``deltas`` would pass a limit (no lock; see claim)."""
        if self.noop:
            return
        with reader(self._api_db).connect() as conn:
            self._check(conn, project_id, user_id, deltas, group_uuid, message)

    def _check(
        self,
        conn: sa.Connection,
        project_id: str,
        user_id: str | None,
        deltas: Mapping[str, int],
        group_uuid: str | None,
        message: str | None,
    ) -> None:
        counted = self.count_usage(
            project_id, user_id, set(deltas), conn=conn, group_uuid=group_uuid
        )
        classes, projects, users = repo.limit_layers(conn, DEFAULT_CLASS, project_id, user_id)
        project_limits = self.config_defaults()
        project_limits.update(self._known(classes))
        project_limits.update(self._known(projects))
        user_limits = project_limits
        if user_id:
            user_limits = {**project_limits, **self._known(users)}
        for scope, usage, limits in (
            ("project", counted.project, project_limits),
            ("user", counted.user, user_limits),
        ):
            overs = [
                r
                for r, delta in deltas.items()
                if self._over(r, usage, counted, delta, limits, project_limits)
            ]
            if overs:
                raise QuotaExceeded(overs, limits, usage, scope, message)

    @staticmethod
    def _over(
        resource: str,
        usage: Mapping[str, int],
        counted: repo.Scoped,
        delta: int,
        limits: Mapping[str, int],
        project_limits: Mapping[str, int],
    ) -> bool:
        if resource not in usage:
            return False
        limit = limits[resource]
        if resource not in counted.project:
            # Counted for the user only (key pairs, group members): both limits apply.
            limit = _strictest(limit, project_limits[resource])
        return not is_unlimited(limit) and usage[resource] + delta > limit

    @contextmanager
    def claim(
        self,
        project_id: str,
        user_id: str | None,
        deltas: Mapping[str, int],
        *,
        group_uuid: str | None = None,
        message: str | None = None,
    ) -> Iterator[sa.Connection]:
        """Check ``deltas`` under a lock and yield the API-DB transaction to insert into.

        The caller's writes on the yielded connection commit together with the lock release;
        an exception inside the block rolls them back. Raises QuotaExceeded before yielding.
        """
        keys = self._lock_keys(project_id, user_id, deltas, group_uuid)
        if keys and not self.noop:
            # The lock rows exist after a scope's first claim: create them (in a transaction
            # of their own, committed before anyone locks them) only when one is missing.
            with self._api_db.begin() as conn:
                missing = [key for key in keys if not repo.lock(conn, key)]
                if not missing:
                    self._check(conn, project_id, user_id, deltas, group_uuid, message)
                    yield conn
                    return
            repo.ensure_lock_rows(self._api_db, missing)
        with self._api_db.begin() as conn:
            if not self.noop:
                for key in keys:
                    repo.lock(conn, key)
                self._check(conn, project_id, user_id, deltas, group_uuid, message)
            yield conn

    @staticmethod
    def _lock_keys(
        project_id: str, user_id: str | None, deltas: Mapping[str, int], group_uuid: str | None
    ) -> list[repo.LockKey]:
        keys: set[repo.LockKey] = set()
        for resource in deltas:
            if resource not in COUNTED:
                continue
            if resource == "key_pairs":
                keys.add(("", user_id or "", resource))
            elif resource == "server_group_members":
                keys.add((group_uuid or "", user_id or "", resource))
            else:
                keys.add((project_id, "", resource))
        # A fixed order keeps two multi-resource claims from deadlocking.
        return sorted(keys)


def effective_limit(
    services: ApiServices, project_id: str, user_id: str | None, resource: str
) -> int:
    """The limit that binds ``user_id`` in ``project_id`` for ``resource`` (-1: unlimited).

    For resources counted per user only (key pairs, server group members) Nova applies both the
    user's and the project's limit, so this is the stricter of the two.
    """
    engine = QuotaEngine(services)
    project = engine.limits(project_id)[resource]
    if user_id is None:
        return project
    user = engine.limits(project_id, user_id)[resource]
    return _strictest(user, project) if resource in USER_COUNTED else user


def _bound(value: int) -> float:
    return float("inf") if value == -1 else value


def update_limits(
    engine: QuotaEngine,
    project_id: str,
    user_id: str | None,
    requested: Mapping[str, Any],
    force: bool,
) -> None:
    """Validate every requested limit against the settable range, then store them all."""
    settable = engine.settable(project_id, user_id)
    valid: dict[str, int] = {}
    for resource, raw in requested.items():
        if resource == "force" or (not raw and raw != 0):
            continue
        value = int(raw)
        if not force:
            _check_range(resource, value, settable[resource])
        valid[resource] = value
    engine.set_limits(project_id, user_id, valid)


def _check_range(resource: str, value: int, allowed: Settable) -> None:
    if _bound(value) < _bound(allowed.minimum):
        raise Invalid(
            f"Quota limit {value} for {resource} must be greater than or equal to already "
            f"used and reserved {allowed.minimum}."
        )
    if _bound(value) > _bound(allowed.maximum):
        raise Invalid(
            f"Quota limit {value} for {resource} must be less than or equal to {allowed.maximum}."
        )

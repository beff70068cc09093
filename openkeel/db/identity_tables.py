"""Tables of the embedded identity service (a Keystone v3 subset, decision 0040).

They live in the API database, in their own MetaData outside Nova's schema (as the image
service's do, decision 0034): projects, users (scrypt password hashes), roles, role assignments
(a user's role on a project or on the system), the Fernet keys tokens are sealed with, and the
audit ids of revoked tokens. Only Keystone's ``default`` domain exists. :func:`install_tables`
creates them; :mod:`openkeel.db.identity_store` reads and writes them.
"""

from __future__ import annotations

import datetime

import sqlalchemy as sa

from openkeel.db.lazy_tables import create_missing

metadata = sa.MetaData()
projects_table = sa.Table(
    "openkeel_identity_projects",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(64), nullable=False),
    sa.Column("domain_id", sa.String(64), nullable=False),
    sa.Column("description", sa.Text, nullable=False, default=""),
    sa.Column("enabled", sa.Boolean, nullable=False, default=True),
    sa.Column("tags", sa.Text, nullable=False, default="[]"),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.UniqueConstraint("domain_id", "name", name="uniq_identity_project_name"),
)
users_table = sa.Table(
    "openkeel_identity_users",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("domain_id", sa.String(64), nullable=False),
    sa.Column("enabled", sa.Boolean, nullable=False, default=True),
    sa.Column("password_hash", sa.String(255)),
    sa.Column("default_project_id", sa.String(64)),
    # Other attributes a client sets (email, description, ...), as JSON text.
    sa.Column("extra", sa.Text, nullable=False, default="{}"),
    # Tokens issued before this instant are invalid (password change, disabling).
    sa.Column("tokens_valid_after", sa.DateTime),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.UniqueConstraint("domain_id", "name", name="uniq_identity_user_name"),
)
roles_table = sa.Table(
    "openkeel_identity_roles",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(255), nullable=False, unique=True),
    sa.Column("description", sa.Text, nullable=False, default=""),
)
# target_id: a project id, or SYSTEM_TARGET for a role on the whole system.
assignments_table = sa.Table(
    "openkeel_identity_assignments",
    metadata,
    sa.Column("user_id", sa.String(64), primary_key=True),
    sa.Column("target_id", sa.String(64), primary_key=True),
    sa.Column("role_id", sa.String(64), primary_key=True),
)
keys_table = sa.Table(
    "openkeel_identity_keys",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("key", sa.String(64), nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
)
revocations_table = sa.Table(
    "openkeel_identity_revocations",
    metadata,
    sa.Column("audit_id", sa.String(64), primary_key=True),
    # The revoked token's own expiry: after it the row can go.
    sa.Column("expires_at", sa.DateTime, nullable=False),
)

# Application credentials: a user's delegation of (some of) their roles on one project, used
# with a secret instead of the user's password (Cluster API, Terraform).
app_credentials_table = sa.Table(
    "openkeel_identity_app_credentials",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("user_id", sa.String(64), nullable=False, index=True),
    sa.Column("project_id", sa.String(64), nullable=False),
    sa.Column("secret_hash", sa.String(255), nullable=False),
    sa.Column("description", sa.Text, nullable=False, default=""),
    sa.Column("expires_at", sa.DateTime),
    sa.Column("unrestricted", sa.Boolean, nullable=False, default=False),
    # Role ids, as JSON text.
    sa.Column("roles", sa.Text, nullable=False, default="[]"),
    sa.UniqueConstraint("user_id", "name", name="uniq_identity_app_credential_name"),
)

SYSTEM_TARGET = "system:all"


def now() -> datetime.datetime:
    """Naive UTC with microseconds (token issue times are compared with these)."""
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def install_tables(engine: sa.Engine) -> None:
    """Create the identity tables that are missing."""
    create_missing(engine, metadata)

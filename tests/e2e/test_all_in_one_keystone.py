"""``openkeel all-in-one --config-file F`` with ``[api] auth_strategy = keystone``: the
all-in-one's noauth default gives way to the file, and requests are checked against the real
Keystone of scripts/start-keystone.sh (skipped locally without it, required in CI)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.api.test_keystone_auth import (
    KS_ROOT,
    KS_V3,
    Identity,
    ident,
    issue_token,
)
from tests.e2e.conftest import all_in_one

__all__ = ["ident"]

pytestmark = pytest.mark.keystone


def test_keystone_mode_from_a_config_file(tmp_path: Path, ident: Identity) -> None:
    config = tmp_path / "keystone.conf"
    config.write_text(
        "[api]\nauth_strategy = keystone\n"
        "[keystone_authtoken]\n"
        f"auth_url = {KS_V3}\nwww_authenticate_uri = {KS_ROOT}\n"
        f"username = {ident.service_user}\npassword = {ident.password}\n"
        f"project_name = {ident.service_project}\n"
        "user_domain_id = default\nproject_domain_id = default\n"
    )
    scope = {"project": {"id": ident.member_project_id}}
    token, _ = issue_token(ident.member_user, ident.password, scope)
    data_dir = tmp_path / "aio"
    data_dir.mkdir()
    with all_in_one(data_dir, "--config-file", str(config)) as cloud:
        anonymous = httpx.get(f"{cloud.url}/servers", timeout=30)
        assert anonymous.status_code == 401
        assert anonymous.headers["www-authenticate"].startswith("Keystone uri=")
        noauth = httpx.get(f"{cloud.url}/servers", headers={"X-Auth-Token": "admin:admin"})
        assert noauth.status_code == 401  # the noauth default is gone, not merely shadowed
        listed = httpx.get(f"{cloud.url}/servers", headers={"X-Auth-Token": token}, timeout=30)
        assert listed.status_code == 200, listed.text
        assert listed.json() == {"servers": []}

"""Kubeconfigs as real clusters hand them out, against the real kube-apiserver (issue 9 item 5).

Each form is loaded by ``KubeConfig.load`` (the ``kubernetes`` package's loader, decision 0037)
and must list Nodes on the server: ``*-data`` fields, a client certificate signed by the
server's client CA, ``tokenFile`` rotated while the client runs, an ``exec`` credential plugin,
``KUBECONFIG``-style merging, a context other than the current one, ``insecure-skip-tls-verify``,
``tls-server-name``, and the in-cluster service account whose token rotates. Skips locally
(fails under ``CI``) when the server is not answering.
"""

from __future__ import annotations

import base64
import datetime
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from openkeel.virt.kubevirt import client as k
from tests.virt.kubevirt import kube_env

PKI = Path(kube_env.KUBECONFIG).parent / "run" / "pki"
SERVER = "https://127.0.0.1:16443"


@pytest.fixture(scope="module")
def admin_token() -> str:
    client = kube_env.connect()
    if client is None:
        kube_env.unavailable(f"no answer with {kube_env.KUBECONFIG}")
    client.close()
    return (PKI / "admin.token").read_text().strip()


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def _write(path: Path, doc: dict[str, Any]) -> str:
    path.write_text(json.dumps(doc))  # JSON is YAML
    return str(path)


def _config(
    cluster: dict[str, Any], user: dict[str, Any], *, name: str = "c", namespace: str = "ns1"
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": user}],
        "contexts": [
            {"name": name, "context": {"cluster": name, "user": name, "namespace": namespace}}
        ],
        "current-context": name,
    }


def _lists_nodes(config: k.KubeConfig) -> bool:
    client = k.KubeClient(config, timeout=10.0)
    try:
        client.request("GET", k.NODES.path(None), params={"limit": "1"})
        return True
    finally:
        client.close()


def test_data_fields(tmp_path: Path, admin_token: str) -> None:
    doc = _config({"server": SERVER, "certificate-authority-data": _b64(PKI / "ca.crt")},
                  {"token": admin_token})  # fmt: skip
    config = k.KubeConfig.load(_write(tmp_path / "kc", doc))
    assert (config.server, config.namespace) == (SERVER, "ns1")
    assert _lists_nodes(config)


@pytest.fixture(scope="module")
def client_cert(tmp_path_factory: pytest.TempPathFactory, admin_token: str) -> Iterator[tuple[str, str]]:  # fmt: skip
    """A client certificate (group system:masters) signed by the server's client CA."""
    ca_key = serialization.load_pem_private_key((PKI / "ca.key").read_bytes(), None)
    ca_cert = x509.load_pem_x509_certificate((PKI / "ca.crt").read_bytes())
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:masters"),
                         x509.NameAttribute(NameOID.COMMON_NAME, "openkeel-test")])  # fmt: skip
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(subject).issuer_name(ca_cert.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
    )  # fmt: skip
    pem_cert = cert.public_bytes(serialization.Encoding.PEM)
    pem_key = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    yield base64.b64encode(pem_cert).decode(), base64.b64encode(pem_key).decode()


def test_client_certificate_data(tmp_path: Path, client_cert: tuple[str, str]) -> None:
    """kubeadm, kind and k3s hand out exactly this: everything inline, no token."""
    cert, key = client_cert
    doc = _config({"server": SERVER, "certificate-authority-data": _b64(PKI / "ca.crt")},
                  {"client-certificate-data": cert, "client-key-data": key})  # fmt: skip
    config = k.KubeConfig.load(_write(tmp_path / "kc", doc))
    assert config.credentials is None and config.cert_file and config.key_file
    assert _lists_nodes(config)


def test_token_file_rotated_while_running(tmp_path: Path, admin_token: str) -> None:
    token = tmp_path / "token"
    token.write_text("not-yet-valid\n")
    doc = _config({"server": SERVER, "certificate-authority": str(PKI / "ca.crt")},
                  {"tokenFile": str(token)})  # fmt: skip
    client = k.KubeClient(k.KubeConfig.load(_write(tmp_path / "kc", doc)), timeout=10.0)
    try:
        with pytest.raises(k.KubeError) as refused:
            client.request("GET", k.NODES.path(None))
        assert refused.value.status == 401
        token.write_text(admin_token + "\n")  # the token is rotated under the running client
        assert client.request("GET", k.NODES.path(None))["kind"] == "NodeList"
    finally:
        client.close()


@pytest.mark.parametrize("version", ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"])  # fmt: skip
def test_exec_credential_plugin(tmp_path: Path, admin_token: str, version: str) -> None:
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import json\n"
        f"print(json.dumps({{'apiVersion': {version!r}, 'kind': 'ExecCredential',"
        f" 'status': {{'token': {admin_token!r}}}}}))\n"
    )
    exec_ = {"apiVersion": version, "command": sys.executable, "args": [str(plugin)],
             "interactiveMode": "Never"}  # fmt: skip
    doc = _config({"server": SERVER, "certificate-authority": str(PKI / "ca.crt")}, {"exec": exec_})  # fmt: skip
    config = k.KubeConfig.load(_write(tmp_path / "kc", doc))
    assert config.credentials is not None
    assert _lists_nodes(config)


def test_kubeconfig_list_is_merged(tmp_path: Path, admin_token: str) -> None:
    """``a:b`` as KUBECONFIG: clusters and users from one file, the context from another."""
    full = _config({"server": SERVER, "certificate-authority": str(PKI / "ca.crt")}, {"token": admin_token})  # fmt: skip
    first = _write(tmp_path / "a", {"apiVersion": "v1", "kind": "Config", "clusters": full["clusters"], "users": full["users"]})  # fmt: skip
    second = _write(tmp_path / "b", {"apiVersion": "v1", "kind": "Config", "contexts": full["contexts"], "current-context": "c"})  # fmt: skip
    assert _lists_nodes(k.KubeConfig.load(f"{first}:{second}"))


def test_context_other_than_the_current_one(tmp_path: Path, admin_token: str) -> None:
    doc = _config({"server": SERVER, "certificate-authority": str(PKI / "ca.crt")},
                  {"token": admin_token}, name="good", namespace="ns-good")  # fmt: skip
    doc["clusters"].append({"name": "bad", "cluster": {"server": "https://127.0.0.1:9"}})
    doc["contexts"].append({"name": "bad", "context": {"cluster": "bad", "user": "good"}})
    doc["current-context"] = "bad"
    path = _write(tmp_path / "kc", doc)
    assert k.KubeConfig.load(path).server == "https://127.0.0.1:9"
    chosen = k.KubeConfig.load(path, "good")
    assert (chosen.server, chosen.namespace) == (SERVER, "ns-good")
    assert _lists_nodes(chosen)


def test_insecure_skip_tls_verify(tmp_path: Path, admin_token: str) -> None:
    doc = _config({"server": SERVER, "insecure-skip-tls-verify": True}, {"token": admin_token})
    config = k.KubeConfig.load(_write(tmp_path / "kc", doc))
    assert config.verify is False
    assert _lists_nodes(config)


def test_tls_server_name(tmp_path: Path, admin_token: str) -> None:
    """The certificate names localhost and 127.0.0.1: checking it for ``localhost`` passes,
    for another name fails, whatever address the server is reached at."""
    good = _config({"server": SERVER, "certificate-authority": str(PKI / "ca.crt"),
                    "tls-server-name": "localhost"}, {"token": admin_token})  # fmt: skip
    assert _lists_nodes(k.KubeConfig.load(_write(tmp_path / "good", good)))
    bad = _config({"server": SERVER, "certificate-authority": str(PKI / "ca.crt"),
                   "tls-server-name": "wrong.example"}, {"token": admin_token})  # fmt: skip
    with pytest.raises(k.KubeError) as refused:
        _lists_nodes(k.KubeConfig.load(_write(tmp_path / "bad", bad)))
    assert refused.value.status == 0 and "certificate" in refused.value.message.lower()


def test_in_cluster_service_account_token_rotates(
    tmp_path: Path, admin_token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "ca.crt").write_bytes((PKI / "ca.crt").read_bytes())
    (account / "token").write_text("expired-bound-token")
    (account / "namespace").write_text("openkeel")
    monkeypatch.setattr(k, "SERVICE_ACCOUNT", account)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "16443")
    config = k.KubeConfig.load(None)
    assert (config.server, config.namespace) == (SERVER, "openkeel")
    client = k.KubeClient(config, timeout=10.0)
    try:
        with pytest.raises(k.KubeError) as refused:
            client.request("GET", k.NODES.path(None))
        assert refused.value.status == 401
        (account / "token").write_text(admin_token)  # the kubelet rotated the bound token
        assert client.request("GET", k.NODES.path(None))["kind"] == "NodeList"
    finally:
        client.close()

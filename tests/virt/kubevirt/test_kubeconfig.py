"""Kubeconfigs as real clusters hand them out, against the real kube-apiserver (issue 9 item 5).

Each form is loaded by ``KubeConfig.load`` (the ``kubernetes`` package's loader, decision 0037)
and must list Nodes on the server: ``*-data`` fields, a client certificate signed by the
server's client CA, ``tokenFile`` rotated while the client runs, an ``exec`` credential plugin,
``KUBECONFIG``-style merging, a context other than the current one, ``insecure-skip-tls-verify``,
``tls-server-name``, and the in-cluster service account whose token rotates. Skips locally
(fails under ``CI``) when the server is not answering.

The unit tests (no server) check what the loader leaves unsaid: ``*-data`` written to files,
kubectl's first-wins merge of a ':' list, ``proxy-url`` (through a recording proxy), exec
credentials renewed when their ``expirationTimestamp`` passes, the in-cluster token re-read
after a minute, the oidc id-token, and one-line errors for an unknown auth-provider and a
missing or failing exec plugin of the chosen user (not of the others).
"""

from __future__ import annotations

import base64
import datetime
import json
import sys
import threading
import types
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from kubernetes.config import incluster_config, kube_config

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


def test_exec_credential_renewed_after_401(tmp_path: Path, admin_token: str) -> None:
    """A credential revoked before it expired: the 401 runs the plugin again."""
    issued = tmp_path / "issued"
    issued.write_text("revoked-token")
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import json, pathlib\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind':"
        f" 'ExecCredential', 'status': {{'token': pathlib.Path({str(issued)!r}).read_text()}}}}))\n"
    )
    exec_ = {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
             "args": [str(plugin)], "interactiveMode": "Never"}  # fmt: skip
    doc = _config({"server": SERVER, "certificate-authority": str(PKI / "ca.crt")}, {"exec": exec_})  # fmt: skip
    config = k.KubeConfig.load(_write(tmp_path / "kc", doc))
    assert config.credentials is not None
    assert config.credentials.header() == "Bearer revoked-token"
    issued.write_text(admin_token)  # what the plugin hands out from now on
    assert _lists_nodes(config)
    assert config.credentials.header() == f"Bearer {admin_token}"


# --- unit tests: no server -------------------------------------------------------------------


def _pem_pair() -> tuple[bytes, bytes, bytes]:
    """A self-signed CA and a client certificate it signed, with the client key (PEM)."""
    now = datetime.datetime.now(datetime.UTC)

    def build(subject: str, issuer: str, public: Any, signer: Any) -> x509.Certificate:
        return (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(public).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .sign(signer, hashes.SHA256())
        )  # fmt: skip

    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca = build("test-ca", "test-ca", ca_key.public_key(), ca_key)
    cert = build("someone", "test-ca", key.public_key(), ca_key)
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(
        pem, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    )
    return ca.public_bytes(pem), cert.public_bytes(pem), key_pem


def test_unit_data_fields_become_files(tmp_path: Path) -> None:
    ca, cert, key = _pem_pair()
    enc = lambda data: base64.b64encode(data).decode()  # noqa: E731
    doc = _config(
        {"server": "https://kube.example:6443", "certificate-authority-data": enc(ca),
         "insecure-skip-tls-verify": False, "tls-server-name": "api.internal"},
        {"client-certificate-data": enc(cert), "client-key-data": enc(key)},
    )  # fmt: skip
    config = k.KubeConfig.load(_write(tmp_path / "kc", doc))
    assert config.ca_file and config.cert_file and config.key_file
    assert Path(config.ca_file).read_bytes() == ca
    assert (Path(config.cert_file).read_bytes(), Path(config.key_file).read_bytes()) == (cert, key)
    assert (config.server, config.namespace, config.verify) == ("https://kube.example:6443", "ns1", True)  # fmt: skip
    assert config.tls_server_name == "api.internal" and config.credentials is None
    k.KubeClient(config).close()  # the certificate and key load into the TLS context


def test_unit_insecure_skip_tls_verify(tmp_path: Path) -> None:
    doc = _config({"server": "https://kube.example", "insecure-skip-tls-verify": True}, {"token": "t"})  # fmt: skip
    config = k.KubeConfig.load(_write(tmp_path / "kc", doc))
    assert config.verify is False
    assert config.credentials is not None and config.credentials.header() == "Bearer t"


def test_unit_list_merged_first_wins(tmp_path: Path) -> None:
    """kubectl's rules: the first file setting current-context wins, and so does the first
    entry of a name; files that do not exist are skipped."""
    first = _config({"server": "https://first"}, {"token": "one"}, name="one")
    first["clusters"].append({"name": "two", "cluster": {"server": "https://first-two"}})
    second = _config({"server": "https://second"}, {"token": "two"}, name="two", namespace="n2")
    a, b = _write(tmp_path / "a", first), _write(tmp_path / "b", second)
    merged = f"{tmp_path / 'missing'}:{a}:{b}"
    assert k.KubeConfig.load(merged).server == "https://first"
    chosen = k.KubeConfig.load(merged, "two")  # context and user of b, cluster of a
    assert (chosen.server, chosen.namespace) == ("https://first-two", "n2")
    assert chosen.credentials is not None and chosen.credentials.header() == "Bearer two"
    assert k.KubeConfig.load(f"{b}:{a}").server == "https://second"


class _Proxy:
    """An HTTP proxy stand-in that answers every request itself and records them."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return

            def do_GET(self) -> None:
                proxy.seen.append((self.path, self.headers.get("Authorization")))
                data = orjson.dumps({"kind": "NodeList", "items": []})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = False
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="fake-proxy")
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


def test_unit_proxy_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Requests go through the kubeconfig's proxy-url (and only the kubeconfig decides:
    an HTTP_PROXY in the environment is not used)."""
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    proxy = _Proxy()
    try:
        url = f"http://127.0.0.1:{proxy.httpd.server_address[1]}"
        doc = _config({"server": "http://kube.invalid:6443", "proxy-url": url}, {"token": "t"})
        config = k.KubeConfig.load(_write(tmp_path / "kc", doc))
        assert config.proxy == url
        client = k.KubeClient(config, timeout=5.0)
        try:
            assert client.request("GET", k.NODES.path(None))["kind"] == "NodeList"
        finally:
            client.close()
    finally:
        proxy.stop()
    assert proxy.seen == [("http://kube.invalid:6443/api/v1/nodes", "Bearer t")]


def _later(module: Any, monkeypatch: pytest.MonkeyPatch, delta: datetime.timedelta) -> None:
    """The module's clock moved ``delta`` ahead (the loaders read datetime.datetime.now)."""

    class Later(datetime.datetime):
        @classmethod
        def now(cls, tz: datetime.tzinfo | None = None) -> Later:
            moved = datetime.datetime.now(tz) + delta
            return cls.fromtimestamp(moved.timestamp(), tz)

    shim = types.SimpleNamespace(datetime=Later, timedelta=datetime.timedelta)
    monkeypatch.setattr(module, "datetime", shim)


def test_unit_exec_credential_renewed_when_expired(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    expires = datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=1)
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import json, pathlib\n"
        f"runs = pathlib.Path({str(runs)!r})\n"
        "n = int(runs.read_text()) + 1 if runs.exists() else 1\n"
        "runs.write_text(str(n))\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1beta1', 'kind':"
        f" 'ExecCredential', 'status': {{'token': f't{{n}}', 'expirationTimestamp':"
        f" {expires.strftime('%Y-%m-%dT%H:%M:%SZ')!r}}}}}))\n"
    )
    exec_ = {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
             "args": [str(plugin)]}  # fmt: skip
    doc = _config({"server": "https://kube.example"}, {"exec": exec_})
    config = k.KubeConfig.load(_write(tmp_path / "kc", doc))
    assert config.credentials is not None
    assert [config.credentials.header(), config.credentials.header()] == ["Bearer t1"] * 2
    assert runs.read_text() == "1"  # not run again while the credential is valid
    _later(kube_config, monkeypatch, datetime.timedelta(hours=1))
    assert config.credentials.header() == "Bearer t2"


def test_unit_in_cluster_token_reread_after_a_minute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "ca.crt").write_bytes(_pem_pair()[0])
    (account / "token").write_text("first\n")
    monkeypatch.setattr(k, "SERVICE_ACCOUNT", account)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    config = k.KubeConfig.load(None)
    assert (config.server, config.namespace) == ("https://10.0.0.1:443", "default")
    assert config.ca_file == str(account / "ca.crt")
    assert config.credentials is not None
    (account / "token").write_text("second\n")  # the kubelet rotated it
    assert config.credentials.header() == "bearer first"  # read at most once a minute
    _later(incluster_config, monkeypatch, datetime.timedelta(seconds=61))
    assert config.credentials.header() == "bearer second"


def test_unit_in_cluster_outside_a_pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(k, "SERVICE_ACCOUNT", tmp_path)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(k.KubeError) as refused:
        k.KubeConfig.load(None)
    assert refused.value.reason == "BadConfig" and "Service host/port is not set" in refused.value.message  # fmt: skip


def _jwt(claims: dict[str, Any]) -> str:
    part = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip("=")  # noqa: E731
    return f"{part({'alg': 'RS256'})}.{part(claims)}.c2ln"


def test_unit_oidc_id_token(tmp_path: Path) -> None:
    exp = int((datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=1)).timestamp())
    token = _jwt({"sub": "someone", "exp": exp})
    user = {"auth-provider": {"name": "oidc", "config": {"id-token": token, "client-id": "k"}}}
    config = k.KubeConfig.load(_write(tmp_path / "kc", _config({"server": "https://kube.example"}, user)))  # fmt: skip
    assert config.credentials is not None and config.credentials.header() == f"Bearer {token}"


@pytest.mark.parametrize(
    ("user", "expected"),
    [
        ({"auth-provider": {"name": "azure", "config": {}}},
         "user 'c': auth-provider 'azure' is not supported (only oidc and gcp); use an exec"),
        ({"auth-provider": {"name": "oidc", "config": {"id-token": "not-a-jwt"}}},
         "user 'c': auth-provider 'oidc' gave no token"),
        ({"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "no-such-plugin-x",
                   "installHint": "Install it from example.com."}},
         "the credential plugin 'no-such-plugin-x' of user 'c' is not installed (not found on"
         " PATH). Install it from example.com."),
        ({"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                   "args": ["-c", "import sys; sys.exit('no session: run login first')"]}},
         f"the credential plugin {sys.executable!r} of user 'c' failed: exec: process returned 1."
         " no session: run login first"),
        ({"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                   "args": ["-c", "print('{}')"]}},
         f"the credential plugin {sys.executable!r} of user 'c' failed:"),
    ],
    ids=["unknown-auth-provider", "oidc-not-a-jwt", "plugin-missing", "plugin-fails", "plugin-output"],
)  # fmt: skip
def test_unit_unusable_user_is_a_clear_error(
    tmp_path: Path, user: dict[str, Any], expected: str
) -> None:
    with pytest.raises(k.KubeError) as refused:
        k.KubeConfig.load(_write(tmp_path / "kc", _config({"server": "https://kube.example"}, user)))  # fmt: skip
    assert refused.value.reason == "BadConfig"
    assert refused.value.message.startswith(expected), refused.value.message


def test_unit_other_users_plugins_do_not_matter(tmp_path: Path) -> None:
    """A shared kubeconfig may name plugins of other clouds that this host does not have."""
    doc = _config({"server": "https://kube.example"}, {"token": "t"})
    doc["users"].append({"name": "eks", "user": {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "no-such-aws"}}})  # fmt: skip
    config = k.KubeConfig.load(_write(tmp_path / "kc", doc))
    assert config.credentials is not None and config.credentials.header() == "Bearer t"


def test_unit_token_file_reread_after_a_minute(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("first\n")
    doc = _config({"server": "https://kube.example"}, {"tokenFile": str(token)})
    config = k.KubeConfig.load(_write(tmp_path / "kc", doc))
    credentials = config.credentials
    assert credentials is not None and credentials.header() == "Bearer first"
    token.write_text("second\n")
    assert credentials.header() == "Bearer first"  # read at most once a minute
    start = credentials.clock()
    credentials.clock = lambda: start + 60.0
    assert credentials.header() == "Bearer second"


def test_unit_reload_of_a_broken_kubeconfig_keeps_the_credential(tmp_path: Path) -> None:
    path = _write(tmp_path / "kc", _config({"server": "https://kube.example"}, {"token": "t"}))
    config = k.KubeConfig.load(path)
    assert config.credentials is not None
    Path(path).write_text("{{{ not: yaml")  # edited badly while the service runs
    config.credentials.reload()  # as after a 401
    assert config.credentials.header() == "Bearer t"


def test_unit_relative_plugin_is_found_next_to_the_kubeconfig(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    plugin = tmp_path / "bin" / "plugin"
    plugin.write_text(
        f"#!{sys.executable}\n"
        'print(\'{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",'
        ' "status": {"token": "t"}}\')\n'
    )
    plugin.chmod(0o755)
    exec_ = {"apiVersion": "client.authentication.k8s.io/v1", "command": "./bin/plugin"}
    config = k.KubeConfig.load(_write(tmp_path / "kc", _config({"server": "https://kube.example"}, {"exec": exec_})))  # fmt: skip
    assert config.credentials is not None and config.credentials.header() == "Bearer t"


def test_unit_socks_proxy_url(tmp_path: Path) -> None:
    """kubectl takes socks5:// proxies too (httpx needs its socks extra for them)."""
    doc = _config({"server": "https://kube.example", "proxy-url": "socks5://127.0.0.1:1080"}, {"token": "t"})  # fmt: skip
    config = k.KubeConfig.load(_write(tmp_path / "kc", doc))
    assert config.proxy == "socks5://127.0.0.1:1080"
    k.KubeClient(config).close()

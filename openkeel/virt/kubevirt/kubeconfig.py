"""Kubeconfig loading for the KubeVirt driver, by the ``kubernetes`` package's loader.

Used by openkeel.virt.kubevirt.client (``KubeConfig.load``). The maintained loader of the
official Python client reads what real clusters hand out (decision 0037): ``*-data`` fields
(kubeadm, kind, k3s), ``tokenFile``, ``exec`` credential plugins (EKS, GKE, kubelogin; v1,
v1beta1, v1alpha1, refreshed when their ``expirationTimestamp`` passes), ``auth-provider``
(oidc, gcp, azure), ``insecure-skip-tls-verify``, ``tls-server-name``, ``proxy-url``,
contexts, and ``KUBECONFIG``-style lists of files (``a:b``, merged as kubectl merges them);
and the in-cluster service account, whose token it re-reads every minute (bound tokens rotate).
Only its configuration loading is used: requests stay on our own httpx client.

:class:`Credentials` keeps the loader's configuration and gives the current Authorization
header; ``reload()`` runs the whole loader again (after a 401: a rotated token file, a revoked
exec credential). It is thread-safe.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from kubernetes.client import Configuration
from kubernetes.config import incluster_config as _incluster
from kubernetes.config import kube_config as _kube_config
from kubernetes.config.config_exception import ConfigException

LOG = logging.getLogger(__name__)

# The package is untyped: its two loaders, seen as Any.
kube_config_loader: Any = _kube_config
incluster_config: Any = _incluster

Loader = Callable[[Any], None]  # fills a kubernetes.client.Configuration

# auth-provider names the loader reads; it ignores any other (azure and the rest were
# removed from kubectl in favour of exec plugins such as kubelogin) without a word.
_AUTH_PROVIDERS = frozenset({"oidc", "gcp"})


class ConfigError(Exception):
    """The kubeconfig (or in-cluster environment) cannot be used; the message says why."""


class Credentials:
    """The Authorization header of a loaded configuration, refreshed when it expires.

    ``reread_after`` (seconds): load everything again when the header is that old (a
    ``tokenFile``, which the loader reads once; client-go re-reads it each minute)."""

    def __init__(self, load: Loader, configuration: Any, reread_after: float | None = None) -> None:
        self._load = load
        self._configuration = configuration
        self._lock = threading.Lock()
        self.reread_after = reread_after
        self.clock: Callable[[], float] = time.monotonic  # tests move it
        self._loaded_at = self.clock()

    def header(self) -> str | None:
        if self.reread_after is not None and self.clock() - self._loaded_at >= self.reread_after:
            self.reload()
        with self._lock:
            hook = self._configuration.refresh_api_key_hook
            if hook is not None:
                hook(self._configuration)  # re-reads a token that expired (exec, in-cluster)
            value = self._configuration.api_key.get("BearerToken")
        return str(value).strip() if value else None  # token files often end with a newline

    def reload(self) -> None:
        """Load everything again (the server refused the current credential, or it is due).
        If that fails (the kubeconfig was broken meanwhile), the current one is kept."""
        configuration = _new_configuration()
        try:
            self._load(configuration)
        except Exception as exc:  # the loader raises ConfigException, OSError, YAML errors...
            LOG.warning("kubeconfig could not be loaded again, keeping the credential: %s", exc)
            configuration = None
        with self._lock:
            self._loaded_at = self.clock()
            if configuration is not None:
                self._configuration = configuration


def _new_configuration() -> Any:
    # type.__call__ skips Configuration's copy-the-process-default constructor hook
    return type.__call__(Configuration)


def load(
    path: str | None, context: str | None = None, service_account: Path | None = None
) -> tuple[Any, Credentials | None, str]:
    """The loader's configuration, its credentials (None without a bearer token) and the
    context's namespace; in-cluster when ``path`` is empty."""
    user: tuple[str, dict[str, Any], Path] | None = None
    chosen: str | None = None
    if path:
        # kubectl's merge rule: the first file that sets current-context wins (the loader
        # would take the last one).
        chosen = context or _first_current_context(path)
        user = _user_of(path, chosen)
        if user is not None:
            _check_user(*user)

        def loader(configuration: Any) -> None:
            kube_config_loader.load_kube_config(
                config_file=path,
                context=chosen,
                client_configuration=configuration,
                persist_config=False,
            )

    else:
        account = service_account or Path(incluster_config.SERVICE_TOKEN_FILENAME).parent

        def loader(configuration: Any) -> None:
            incluster_config.InClusterConfigLoader(
                token_filename=str(account / "token"),
                cert_filename=str(account / "ca.crt"),
                try_refresh_token=True,
            ).load_and_set(configuration)

    configuration = _new_configuration()
    try:
        with _loader_errors() as errors:
            loader(configuration)
        namespace = _namespace(path, chosen, service_account)
    except ConfigException as exc:
        raise ConfigError(str(exc)) from exc
    if user is not None and not (configuration.api_key or configuration.cert_file):
        _no_credential(*user, errors)
    reread = 60.0 if user is not None and user[1].get("tokenFile") else None
    credentials = Credentials(loader, configuration, reread) if configuration.api_key else None
    return configuration, credentials, namespace


def _documents(path: str) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Each existing file of a ':' list, parsed (missing ones are skipped, as kubectl does)."""
    for one in path.split(os.pathsep):
        file = Path(one).expanduser()
        if one and file.exists():
            try:
                doc = yaml.safe_load(file.read_text())
            except yaml.YAMLError as exc:
                raise ConfigError(f"{file} is not valid YAML: {exc}") from exc
            if isinstance(doc, dict):
                yield file, doc


def _first_current_context(path: str) -> str | None:
    for _, doc in _documents(path):
        if doc.get("current-context"):
            return str(doc["current-context"])
    return None


def _named(path: str, kind: str, name: object) -> tuple[Path, dict[str, Any]] | None:
    """The first entry of ``kind`` (contexts, users) called ``name`` across the files."""
    for file, doc in _documents(path):
        for entry in doc.get(kind) or []:
            if isinstance(entry, dict) and entry.get("name") == name:
                return file, entry
    return None


def _user_of(path: str, context: str | None) -> tuple[str, dict[str, Any], Path] | None:
    """The user (name, fields, file it is in) of the context, if the files name one."""
    found = _named(path, "contexts", context) if context else None
    name = ((found[1].get("context") or {}) if found else {}).get("user")
    user = _named(path, "users", name) if name else None
    if user is None:
        return None
    return str(name), user[1].get("user") or {}, user[0]


def _check_user(name: str, user: dict[str, Any], file: Path) -> None:
    """Refuse what the loader would silently ignore: an auth-provider it does not know, an
    exec plugin that is not installed."""
    provider = user.get("auth-provider") or {}
    known = provider.get("name") in _AUTH_PROVIDERS
    token = user.get("token") or user.get("tokenFile")
    others = ("exec", "client-certificate", "client-certificate-data", "username")
    if provider and not known and not token and not any(user.get(key) for key in others):
        raise ConfigError(
            f"user {name!r}: auth-provider {provider.get('name')!r} is not supported (only"
            " oidc and gcp); use an exec credential plugin (e.g. kubelogin) instead"
        )
    plugin = user.get("exec") or {}
    command = str(plugin.get("command") or "")
    if not command or known or token:
        return  # the loader prefers those to the plugin
    # A relative command with a '/' runs from the kubeconfig's directory (the loader's cwd).
    found = (
        shutil.which(str(file.parent / command))
        if "/" in command and not command.startswith("/")
        else shutil.which(command)
    )
    if found is None:
        hint = str(plugin.get("installHint") or "")
        raise ConfigError(
            f"the credential plugin {command!r} of user {name!r} is not installed"
            f" (not found on PATH). {hint}".rstrip()
        )


def _no_credential(name: str, user: dict[str, Any], file: Path, errors: list[str]) -> None:
    """The user names a credential but the loader found none: it logs why and goes on
    unauthenticated; say it instead."""
    why = "; ".join(errors)
    if user.get("exec"):
        command = user["exec"].get("command")
        raise ConfigError(
            f"the credential plugin {command!r} of user {name!r} failed: "
            f"{why or 'no token or client certificate in its output'}"
        )
    if user.get("auth-provider"):
        raise ConfigError(
            f"user {name!r}: auth-provider {user['auth-provider'].get('name')!r} gave no"
            f" token: {why or 'its id-token is missing or not a JWT'}"
        )


class _Collect(logging.Handler):
    def __init__(self, errors: list[str]) -> None:
        super().__init__(logging.ERROR)
        self.errors = errors
        self.thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread and "kubernetes" in record.pathname:
            self.errors.append(record.getMessage())


@contextmanager
def _loader_errors() -> Iterator[list[str]]:
    """The errors the loader logs (on the root logger) instead of raising, in this thread."""
    errors: list[str] = []
    handler = _Collect(errors)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield errors
    finally:
        root.removeHandler(handler)


def _namespace(path: str | None, context: str | None, service_account: Path | None) -> str:
    if not path:
        account = service_account or Path(incluster_config.SERVICE_TOKEN_FILENAME).parent
        found = account / "namespace"
        return found.read_text().strip() if found.is_file() else "default"
    contexts, active = kube_config_loader.list_kube_config_contexts(config_file=path)
    chosen = next((c for c in contexts if c.get("name") == context), None) if context else active
    return str(((chosen or {}).get("context") or {}).get("namespace") or "default")

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

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubernetes.client import Configuration
from kubernetes.config import incluster_config as _incluster
from kubernetes.config import kube_config as _kube_config
from kubernetes.config.config_exception import ConfigException

# The package is untyped: its two loaders, seen as Any.
kube_config_loader: Any = _kube_config
incluster_config: Any = _incluster

Loader = Callable[[Any], None]  # fills a kubernetes.client.Configuration


class ConfigError(Exception):
    """The kubeconfig (or in-cluster environment) cannot be used; the message says why."""


class Credentials:
    """The Authorization header of a loaded configuration, refreshed when it expires."""

    def __init__(self, load: Loader, configuration: Any) -> None:
        self._load = load
        self._configuration = configuration
        self._lock = threading.Lock()

    def header(self) -> str | None:
        with self._lock:
            hook = self._configuration.refresh_api_key_hook
            if hook is not None:
                hook(self._configuration)  # re-reads a token that expired (exec, in-cluster)
            value = self._configuration.api_key.get("BearerToken")
        return str(value).strip() if value else None  # token files often end with a newline

    def reload(self) -> None:
        """Load everything again (the server refused the current credential)."""
        configuration = _new_configuration()
        self._load(configuration)
        with self._lock:
            self._configuration = configuration


def _new_configuration() -> Any:
    # type.__call__ skips Configuration's copy-the-process-default constructor hook
    return type.__call__(Configuration)


def load(
    path: str | None, context: str | None = None, service_account: Path | None = None
) -> tuple[Any, Credentials | None, str]:
    """The loader's configuration, its credentials (None without a bearer token) and the
    context's namespace; in-cluster when ``path`` is empty."""
    if path:

        def loader(configuration: Any) -> None:
            kube_config_loader.load_kube_config(
                config_file=path,
                context=context,
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
        loader(configuration)
        namespace = _namespace(path, context, service_account)
    except ConfigException as exc:
        raise ConfigError(str(exc)) from exc
    credentials = Credentials(loader, configuration) if configuration.api_key else None
    return configuration, credentials, namespace


def _namespace(path: str | None, context: str | None, service_account: Path | None) -> str:
    if not path:
        account = service_account or Path(incluster_config.SERVICE_TOKEN_FILENAME).parent
        found = account / "namespace"
        return found.read_text().strip() if found.is_file() else "default"
    contexts, active = kube_config_loader.list_kube_config_contexts(config_file=path)
    chosen = next((c for c in contexts if c.get("name") == context), None) if context else active
    return str(((chosen or {}).get("context") or {}).get("namespace") or "default")

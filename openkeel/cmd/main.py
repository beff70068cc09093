"""The ``openkeel`` command: dispatches to ``all-in-one``, the roles, and the operator
tools ``manage``, ``status`` and ``policy``."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``openkeel`` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "manage":
        from openkeel.cmd import manage

        return manage.main(args[1:])
    if args and args[0] == "status":
        from openkeel.cmd import status

        return status.main(args[1:])
    if args and args[0] == "policy":
        from openkeel.cmd.policy import main as policy_main

        return policy_main(args[1:])
    parser = argparse.ArgumentParser(prog="openkeel", description="OpenStack Compute on KubeVirt")
    sub = parser.add_subparsers(dest="command", required=True)
    aio = sub.add_parser("all-in-one", help="start a whole cloud on the embedded default")
    aio.add_argument("--data-dir", default="./openkeel-data", help="where state is kept")
    aio.add_argument("--port", type=int, default=8774, help="compute API port")
    aio.add_argument("--host", default="127.0.0.1", help="listen address")
    aio.add_argument("--config-file", action="append", default=[], help="extra nova.conf files")
    aio.add_argument(
        "--kubeconfig", help="run servers as KubeVirt VMs on this cluster (one host per node)"
    )
    aio.add_argument(
        "--hosts",
        type=_positive,
        default=2,
        help="simulated compute hosts (default 2; with --kubeconfig: one per node)",
    )
    api = sub.add_parser("api", help="run the compute API role from configuration files")
    api.add_argument("--config-file", action="append", default=[], required=True)
    meta = sub.add_parser("metadata", help="run the metadata API role (guests' metadata)")
    meta.add_argument("--config-file", action="append", default=[], required=True)
    sub.add_parser("manage", help="database, cell and placement administration (nova-manage)")
    sub.add_parser("status", help="upgrade readiness checks (nova-status upgrade check)")
    sub.add_parser("policy", help="policy rules: list, check, sample file (nova-policy)")
    for role in ("conductor", "scheduler", "compute", "novncproxy", "serialproxy"):
        one = sub.add_parser(role, help=f"run the {role} role from configuration files")
        one.add_argument("--config-file", action="append", default=[], required=True)
    ns = parser.parse_args(args)
    from openkeel.cmd.preflight import StartupError

    try:
        return _run(ns)
    except StartupError as exc:
        # One line, no traceback: what is wrong and where (the cause is logged at debug level).
        logging.getLogger(__name__).debug("start-up failed", exc_info=exc)
        print(f"openkeel {ns.command}: {exc}", file=sys.stderr, flush=True)
        return 1


def _run(ns: argparse.Namespace) -> int:
    if ns.command == "all-in-one":
        from openkeel.cmd import all_in_one

        return all_in_one.run(
            ns.data_dir, ns.host, ns.port, ns.config_file, ns.kubeconfig, ns.hosts
        )
    if ns.command in ("novncproxy", "serialproxy"):
        from openkeel.cmd import console_proxy

        return console_proxy.run(ns.command, ns.config_file)
    if ns.command in ("conductor", "scheduler", "compute"):
        from openkeel.cmd import standalone

        return standalone.run(ns.command, ns.config_file)
    if ns.command == "metadata":
        from openkeel.cmd import metadata

        return metadata.run(ns.config_file)
    from openkeel.cmd import api as api_cmd

    return api_cmd.run(ns.config_file)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


if __name__ == "__main__":
    sys.exit(main())

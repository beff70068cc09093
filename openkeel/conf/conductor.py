"""``[conductor]`` options: how the conductor settles builds that no role owns any more.

Nova has no such options (a crashed conductor leaves its builds in BUILD for good); OpenKeel
promises that nothing stays in a transitional state, so the conductor sweeps orphaned builds
(docs/decisions/0025-orphaned-builds.md). Read by ``openkeel.conductor.service``.
"""

from __future__ import annotations

from oslo_config import cfg

OPTS = [
    cfg.IntOpt(
        "build_request_timeout",
        default=300,
        min=0,
        help=(
            "Seconds after which a server that is still waiting to be scheduled (a build "
            "request no conductor has taken) is settled: put in ERROR with a fault in the cell "
            "it reached, or buried in cell0. Messages on a durable transport (RabbitMQ) can "
            "wait this long in a queue; on the in-process transport every build request older "
            "than the process is settled at start-up. 0 disables the periodic sweep."
        ),
    ),
    cfg.IntOpt(
        "orphan_sweep_interval",
        default=60,
        min=-1,
        help="Seconds between two sweeps for orphaned builds (-1: never, 0: the default 60).",
    ),
]


def register(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group="conductor")

"""``[fake_driver]`` options: the simulated driver's pace (``compute_driver = fake.FakeDriver``).

Read by ``openkeel.virt.loading`` when it builds the simulated driver. Not a Nova group (Nova's
fake drivers have no delays): it lets a test or a demonstration see an operation in progress,
e.g. a graceful stop while servers spawn.
"""

from __future__ import annotations

from oslo_config import cfg

OPTS = [
    cfg.DictOpt(
        "operation_delays",
        default={},
        help="Seconds each driver operation takes, by name (spawn:5,power_off:2); none by default.",
    ),
]


def register(conf: cfg.ConfigOpts) -> None:
    """Register the options on ``conf``."""
    conf.register_opts(OPTS, group="fake_driver")


def delays(conf: cfg.ConfigOpts) -> dict[str, float]:
    """``operation_delays`` as numbers (a value that is not one is a configuration error)."""
    try:
        return {name: float(value) for name, value in conf.fake_driver.operation_delays.items()}
    except ValueError as exc:
        raise cfg.ConfigFileValueError(f"[fake_driver] operation_delays: {exc}") from exc

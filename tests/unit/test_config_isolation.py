"""Each ConfigOpts from make_config is its own: an override or default set on one never shows
in another (oslo.config keeps a group's options in its OptGroup object; one shared between
ConfigOpts leaked a test's ``[scheduler] max_attempts = 2`` into every conductor built after)."""

from __future__ import annotations

from oslo_config import cfg

from openkeel.conf import make_config


def _groups(conf: cfg.ConfigOpts) -> list[str]:
    return [name for name in conf if isinstance(getattr(conf, name), cfg.ConfigOpts.GroupAttr)]


def test_an_override_on_one_config_is_not_seen_by_another() -> None:
    first = make_config()
    changed: list[tuple[str | None, str]] = []
    for group in [None, *_groups(first)]:
        opts = first if group is None else getattr(first, group)
        for name in opts:
            if isinstance(getattr(opts, name), int) and not isinstance(getattr(opts, name), bool):
                changed.append((group, name))
    assert ("scheduler", "max_attempts") in changed

    def value(conf: cfg.ConfigOpts, group: str | None, name: str) -> object:
        return getattr(conf if group is None else getattr(conf, group), name)

    overridden = []
    for group, name in changed:
        wanted = int(value(first, group, name)) + 1  # type: ignore[call-overload]
        try:
            first.set_override(name, wanted, group=group)
        except ValueError:
            continue  # at its maximum already
        overridden.append((group, name, wanted))
    second = make_config()
    leaked = [(g, n) for g, n, v in overridden if value(second, g, n) == v]
    assert len(overridden) > 20 and leaked == []

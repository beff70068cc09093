"""Every role's log set-up (openkeel.cmd.logs): one handler, the configured formats, request
ids on the lines of a request, library levels."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from openkeel.cmd import logs
from openkeel.cmd.preflight import StartupError
from openkeel.conf import make_config
from openkeel.logcontext import LogContext, bound


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: logging.getLogger(name).level for name in ("sqlalchemy", "httpx")}
    yield
    for handler in root.handlers:
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)
    for name, old in levels.items():
        logging.getLogger(name).setLevel(old)
    logging.captureWarnings(False)


def test_lines_of_a_request_carry_its_id_user_and_project(
    tmp_path: Path, restore_logging: None
) -> None:
    log_file = tmp_path / "openkeel.log"
    conf = make_config(overrides={})
    logs.register_options(conf)
    conf.set_override("log_file", str(log_file))
    conf.set_override("logging_context_format_string", "%(levelname)s [%(request_id)s "
                      "%(user_identity)s] %(message)s")  # fmt: skip
    conf.set_override("logging_default_format_string", "%(levelname)s [-] %(message)s")
    logs.setup(conf)
    logs.setup(conf)  # a second set-up replaces the handler, never doubles lines
    log = logging.getLogger("openkeel.test")
    log.info("starting")
    with bound(LogContext("req-7", "alice", "p1")):
        log.warning("serving")
    log.debug("hidden")
    lines = log_file.read_text().splitlines()
    assert lines == ["INFO [-] starting", "WARNING [req-7 alice p1] serving"]
    assert logging.getLogger("sqlalchemy").level == logging.WARNING


def test_debug_option_lowers_the_root_level(restore_logging: None) -> None:
    conf = make_config()
    logs.register_options(conf)
    conf.set_override("debug", True)
    logs.setup(conf)
    assert logging.getLogger().level == logging.DEBUG


def test_unwritable_log_file_is_one_clear_start_up_error(tmp_path: Path) -> None:
    conf = make_config()
    logs.register_options(conf)
    conf.set_override("log_file", str(tmp_path / "missing" / "openkeel.log"))
    with pytest.raises(StartupError, match=r"^\[DEFAULT\] log_file .*: No such file or directory$"):
        logs.setup(conf)


def test_log_dir_places_the_file_and_use_stderr_adds_standard_error(
    tmp_path: Path, restore_logging: None
) -> None:
    conf = make_config()
    logs.register_options(conf)
    conf.set_override("log_dir", str(tmp_path))
    assert logs.log_path(conf, "openkeel-compute") == tmp_path / "openkeel-compute.log"
    conf.set_override("log_file", "named.log")
    assert logs.log_path(conf) == tmp_path / "named.log"
    logs.setup(conf)
    named = [h for h in logging.getLogger().handlers if h.get_name() == logs.HANDLER_NAME]
    assert [type(h) for h in named] == [logging.FileHandler]
    conf.set_override("use_stderr", True)
    logs.setup(conf)
    named = [h for h in logging.getLogger().handlers if h.get_name() == logs.HANDLER_NAME]
    assert [type(h) for h in named] == [logging.FileHandler, logging.StreamHandler]
    logging.getLogger("openkeel.test").warning("both")
    assert (tmp_path / "named.log").read_text().endswith("both\n")

"""Graceful stop of role processes on SIGTERM (decision 0066), at the process level.

The roles run as separate processes on RabbitMQ and PostgreSQL (``tests/faults/scaled_out.py``)
with a simulated driver whose spawn takes seconds (``[fake_driver] operation_delays``), so a
signal lands while a server is spawning. A compute host that gets SIGTERM finishes the spawn it
runs and exits 0; one whose ``manager_shutdown_timeout`` runs out exits 1 at once and its next
start settles the interrupted build (ERROR with a fault, never stuck in BUILD); a second signal
ends the process at once. The other roles, the API and the metadata API exit 0. The all-in-one (every role on the
in-process bus) finishes a spawn in progress too. Afterwards the invariants of
``tests/faults/invariants.py`` hold.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.db.backends import DatabaseFactory, database_factory
from tests.e2e.conftest import _free_port
from tests.faults.invariants import check
from tests.faults.processes import Process, all_in_one, nova_conf, wait_http
from tests.faults.scaled_out import ScaledOut, scaled_out
from tests.faults.state import ADMIN, Deployment
from tests.faults.workload import IMAGE, create_flavors

__all__ = ["database_factory"]
# Longer than the time from the boot request to the signal (the spawn must still be running).
SPAWN_SECONDS = "6"
# A bound on how long a process may take to exit once its work is done (start-up of Python
# and a broker round trip are the slow parts); not a performance figure.
EXIT_BOUND = 60.0


def _boot(api: httpx.Client, name: str) -> str:
    body = {"server": {"name": name, "flavorRef": "fi.a", "imageRef": IMAGE, "networks": "none"}}
    answer = api.post("/v2.1/servers", json=body)
    assert answer.status_code == 202, answer.text
    return str(answer.json()["server"]["id"])


def _server(api: httpx.Client, uuid: str) -> dict[str, Any]:
    answer = api.get(f"/v2.1/servers/{uuid}")
    assert answer.status_code == 200, answer.text
    return dict(answer.json()["server"])


def _wait_for(api: httpx.Client, uuid: str, *, task: str | None = None, status: str = "") -> None:
    """Poll until the server's task state is ``task`` (or its status ``status``)."""
    deadline = time.monotonic() + 60
    while True:
        server = _server(api, uuid)
        if (status and server["status"] == status) or (
            not status and server.get("OS-EXT-STS:task_state") == task
        ):
            return
        assert time.monotonic() < deadline, f"{uuid} never got there: {server}"
        time.sleep(0.1)  # polling a process we started, bounded by the deadline


def _signal(process: Process, *signums: signal.Signals) -> int:
    """Send ``signums`` to the process, each once the last was taken (signals pending
    together count once); its exit status."""
    assert process.proc is not None
    for n, signum in enumerate(signums):
        if n:
            process.wait_ready("received: stopping")
        process.proc.send_signal(signum)
    try:
        status = process.proc.wait(timeout=EXIT_BOUND)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"{process.name} did not exit: {process.notable_lines()}") from None
    process.stop()  # exited already: closes this life's log
    return status


def _settled(cloud: ScaledOut | Deployment) -> None:
    report = check(cloud.deployment if isinstance(cloud, ScaledOut) else cloud)
    assert not report.findings, report.summary()


def _restart(cloud: ScaledOut, name: str) -> None:
    cloud.processes[name].start()
    cloud.processes[name].wait_ready(f"OpenKeel {name} running")


def test_a_stopping_compute_finishes_its_spawn_then_exits_0(
    tmp_path: Path, database_factory: DatabaseFactory
) -> None:
    delays = {"operation_delays": f"spawn:{SPAWN_SECONDS}"}
    with (
        scaled_out(tmp_path, database_factory, fake_driver=delays) as cloud,
        httpx.Client(base_url=cloud.url, headers=ADMIN, timeout=30) as api,
    ):
        create_flavors(api)
        uuid = _boot(api, "graceful")
        _wait_for(api, uuid, task="spawning")

        status = _signal(cloud.processes["compute"], signal.SIGTERM)

        log = cloud.processes["compute"].log_path.read_text()
        assert status == 0, log[-3000:]
        server = _server(api, uuid)
        assert (server["status"], server["OS-EXT-STS:task_state"]) == ("ACTIVE", None)
        _settled(cloud)
        # Back again, the host serves the server it built.
        _restart(cloud, "compute")
        assert api.post(f"/v2.1/servers/{uuid}/action", json={"os-stop": None}).status_code == 202
        _wait_for(api, uuid, status="SHUTOFF")
        _settled(cloud)


def test_work_past_the_timeout_is_settled_by_the_next_start(
    tmp_path: Path, database_factory: DatabaseFactory
) -> None:
    sections = {
        "fake_driver": {"operation_delays": "spawn:600"},
        "DEFAULT": {"manager_shutdown_timeout": "1", "graceful_shutdown_timeout": "120"},
    }
    with (
        scaled_out(tmp_path, database_factory, **sections) as cloud,
        httpx.Client(base_url=cloud.url, headers=ADMIN, timeout=30) as api,
    ):
        create_flavors(api)
        uuid = _boot(api, "cut-off")
        _wait_for(api, uuid, task="spawning")

        # Exits once its manager_shutdown_timeout is over, not after the 600 s spawn.
        status = _signal(cloud.processes["compute"], signal.SIGTERM)

        assert status == 1
        log = cloud.processes["compute"].log_path.read_text()
        assert "cut off by the timeout" in log, log[-3000:]
        _restart(cloud, "compute")
        server = _server(api, uuid)
        assert (server["status"], server["OS-EXT-STS:task_state"]) == ("ERROR", None), server
        assert server["fault"]
        _settled(cloud)
        assert api.delete(f"/v2.1/servers/{uuid}").status_code == 204
        _wait_gone(api, uuid)
        _settled(cloud)


def test_a_second_signal_ends_the_process_at_once(
    tmp_path: Path, database_factory: DatabaseFactory
) -> None:
    with (
        scaled_out(tmp_path, database_factory, fake_driver={"operation_delays": "spawn:600"})
        as cloud,
        httpx.Client(base_url=cloud.url, headers=ADMIN, timeout=30) as api,
    ):  # fmt: skip
        create_flavors(api)
        uuid = _boot(api, "interrupted")
        _wait_for(api, uuid, task="spawning")

        status = _signal(cloud.processes["compute"], signal.SIGTERM, signal.SIGTERM)

        assert status == 1
        _restart(cloud, "compute")
        assert _server(api, uuid)["status"] == "ERROR"
        _settled(cloud)


def test_every_role_and_the_api_exit_0_on_sigterm(
    tmp_path: Path, database_factory: DatabaseFactory
) -> None:
    with scaled_out(tmp_path, database_factory) as cloud:
        port = _free_port()
        listen = nova_conf(tmp_path / "metadata.conf", DEFAULT={"metadata_listen_port": str(port)})
        metadata = Process("metadata", ["metadata", "--config-file", str(tmp_path / "nova.conf"),
                                        "--config-file", str(listen)], tmp_path / "metadata.log")  # fmt: skip
        cloud.processes["metadata"] = metadata
        metadata.start()
        wait_http(f"http://127.0.0.1:{port}/", [metadata])
        # An open keep-alive connection does not hold the API back.
        with httpx.Client(base_url=cloud.url, headers=ADMIN, timeout=30) as api:
            assert api.get("/v2.1/servers").status_code == 200
            statuses = {
                name: _signal(process, signal.SIGTERM) for name, process in cloud.processes.items()
            }
        assert statuses == dict.fromkeys(cloud.processes, 0), {
            name: cloud.processes[name].notable_lines() for name, code in statuses.items() if code
        }


# Longer than detecting the call, signalling and probing the closed port together.
UPTIME_SECONDS = "8"
UPTIME_CALLS = 'openkeel_rpc_messages_total{kind="call",method="get_host_uptime",topic="compute"}'


def _uptime_calls(url: str) -> float:
    with httpx.Client(base_url=url, timeout=10) as fresh:
        for line in fresh.get("/metrics").text.splitlines():
            if line.startswith(UPTIME_CALLS):
                return float(line.split()[-1])
    return 0.0


def test_the_api_answers_the_request_in_flight_refuses_new_ones_and_exits_0(
    tmp_path: Path, database_factory: DatabaseFactory
) -> None:
    """SIGTERM while a request waits on compute (a hypervisor's uptime, the host's answer
    paced to take seconds): the port closes at once (a new connection is refused), the request
    in flight gets its real answer, then the process exits 0."""
    delays = {"operation_delays": f"get_host_uptime:{UPTIME_SECONDS}"}
    with (
        scaled_out(tmp_path, database_factory, fake_driver=delays) as cloud,
        httpx.Client(base_url=cloud.url, headers=ADMIN, timeout=60) as api,
    ):
        (hypervisor,) = api.get("/v2.1/os-hypervisors").json()["hypervisors"]
        answers: list[httpx.Response | BaseException] = []

        def ask() -> None:
            try:
                answers.append(api.get(f"/v2.1/os-hypervisors/{hypervisor['id']}/uptime"))
            except BaseException as exc:  # reported by the assertion below
                answers.append(exc)

        asking = threading.Thread(target=ask, name="uptime-request")
        asking.start()
        deadline = time.monotonic() + 30
        while _uptime_calls(cloud.url) < 1:  # the API has sent the call to compute
            assert time.monotonic() < deadline, "the uptime request never reached compute"
            time.sleep(0.05)  # polling a process we started, bounded by the deadline
        api_process = cloud.processes["api"]
        assert api_process.proc is not None
        api_process.proc.send_signal(signal.SIGTERM)
        api_process.wait_ready("received: stopping")
        # the signal asks; the server's loop closes its socket within its tick, then says so
        api_process.wait_ready("No longer accepting connections")
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{cloud.url}/v2.1/", timeout=5)
        assert not answers, "the request was answered before the port was closed"
        assert api_process.proc.poll() is None, "the API exited with a request in flight"
        asking.join(timeout=EXIT_BOUND)
        status = _signal(api_process)
        (answer,) = answers
        assert isinstance(answer, httpx.Response), repr(answer)
        assert answer.status_code == 200, answer.text
        uptime = answer.json()["hypervisor"]
        assert (uptime["id"], uptime["hypervisor_hostname"]) == (hypervisor["id"], hypervisor["hypervisor_hostname"])  # fmt: skip
        assert uptime["uptime"]
        assert status == 0, api_process.notable_lines()


# How long a console session may go on once its proxy is stopping (the proxy's
# manager_shutdown_timeout); long enough to use the session after the signal.
DRAIN_SECONDS = 6


def _listening(port: int, process: Process) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
            return
        except OSError:
            assert process.exited() is None, process.log_path.read_text()[-3000:]
            assert time.monotonic() < deadline, f"{process.name} never listened"
            time.sleep(0.1)  # polling a process we started, bounded by the deadline


def _echoed(ws: Any, text: bytes) -> None:
    """The guest's serial line echoes what is typed: read until ``text`` comes back."""
    ws.send(text)
    seen = b""
    deadline = time.monotonic() + 20
    while text not in seen:
        assert time.monotonic() < deadline, f"never echoed {text!r}: {seen[-200:]!r}"
        frame = ws.recv(timeout=10)
        seen += frame if isinstance(frame, bytes) else frame.encode()


def test_a_console_proxy_lets_open_sessions_end_then_closes_them_and_exits_0(
    tmp_path: Path, database_factory: DatabaseFactory
) -> None:
    """SIGTERM to ``openkeel serialproxy`` with a console session open: new connections are
    refused at once, the open session still carries the guest's serial line, then it is closed
    (1012, service restart) once the drain time passes, and the process exits 0."""
    serial = {"enabled": "true"}
    with (
        scaled_out(tmp_path, database_factory, serial_console=serial) as cloud,
        httpx.Client(base_url=cloud.url, headers=ADMIN, timeout=30) as api,
    ):
        create_flavors(api)
        uuid = _boot(api, "console")
        _wait_for(api, uuid, status="ACTIVE")
        port = _free_port()
        own = nova_conf(
            tmp_path / "serialproxy.conf",
            DEFAULT={"manager_shutdown_timeout": str(DRAIN_SECONDS)},
            serial_console={"enabled": "true", "serialproxy_host": "127.0.0.1",
                            "serialproxy_port": str(port)},
        )  # fmt: skip
        proxy = Process("serialproxy", ["serialproxy", "--config-file", str(tmp_path / "nova.conf"),
                                        "--config-file", str(own)], tmp_path / "serialproxy.log")  # fmt: skip
        cloud.processes["serialproxy"] = proxy
        proxy.start()
        _listening(port, proxy)
        body = {"remote_console": {"protocol": "serial", "type": "serial"}}
        answer = api.post(f"/v2.1/servers/{uuid}/remote-consoles", json=body,
                          headers={"OpenStack-API-Version": "compute 2.6"})  # fmt: skip
        assert answer.status_code == 200, answer.text
        token = parse_qs(urlsplit(answer.json()["remote_console"]["url"]).query)["token"][0]
        url = f"ws://127.0.0.1:{port}/?token={token}"
        with connect(url, open_timeout=10, subprotocols=["binary"]) as ws:  # type: ignore[list-item]
            _echoed(ws, b"before\r")
            assert proxy.proc is not None
            signalled = time.monotonic()
            proxy.proc.send_signal(signal.SIGTERM)
            proxy.wait_ready("received: stopping")
            proxy.wait_ready("No longer accepting connections")
            with pytest.raises(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
            _echoed(ws, b"after\r")  # the open session goes on
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    ws.recv(timeout=DRAIN_SECONDS * 5)
            assert time.monotonic() - signalled >= DRAIN_SECONDS - 1
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
        assert _signal(proxy) == 0, proxy.notable_lines()
        del cloud.processes["serialproxy"]


def _wait_gone(api: httpx.Client, uuid: str) -> None:
    deadline = time.monotonic() + 60
    while api.get(f"/v2.1/servers/{uuid}").status_code != 404:
        assert time.monotonic() < deadline, f"{uuid} was never deleted"
        time.sleep(0.1)  # polling a process we started, bounded by the deadline


def test_the_all_in_one_finishes_its_spawn_then_exits_0(tmp_path: Path) -> None:
    port = _free_port()
    conf = nova_conf(
        tmp_path / "nova.conf",
        api={"auth_strategy": "noauth2"},
        fake_driver={"operation_delays": f"spawn:{SPAWN_SECONDS}"},
    )
    aio = all_in_one(tmp_path, port, conf)
    root = f"http://127.0.0.1:{port}"
    deployment = Deployment(
        root, f"sqlite:///{tmp_path / 'nova_api.sqlite'}",
        f"sqlite:///{tmp_path / 'placement.sqlite'}",
    )  # fmt: skip
    aio.start()
    try:
        wait_http(root + "/v2.1/", [aio])
        with httpx.Client(base_url=root, headers=ADMIN, timeout=30) as api:
            create_flavors(api)
            uuid = _boot(api, "graceful")
            _wait_for(api, uuid, task="spawning")

            status = _signal(aio, signal.SIGTERM)

            assert status == 0, aio.log_path.read_text()[-3000:]
            aio.start()
            wait_http(root + "/v2.1/", [aio])
            server = _server(api, uuid)
            assert (server["status"], server["OS-EXT-STS:task_state"]) == ("ACTIVE", None)
            _settled(deployment)
    finally:
        aio.stop()

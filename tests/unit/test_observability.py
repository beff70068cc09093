"""``/healthcheck`` (as oslo.middleware's, disable_by_file backend) and ``/metrics`` of the
HTTP roles, and the metrics the roles record (decision 0061)."""

from __future__ import annotations

import datetime
import socket
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from openkeel import metrics
from openkeel.api.factory import build_api_app
from openkeel.api.services import ApiServices
from openkeel.conf import make_config
from openkeel.rpc.client import RpcClient
from openkeel.rpc.message import CallContext, Target
from openkeel.rpc.server import RpcServer
from openkeel.rpc.transport import get_transport
from openkeel.runtime.clock import FakeClock
from openkeel.runtime.observability import Observed, api_of, start_metrics_server
from openkeel.runtime.periodic import PeriodicRunner
from tests.client import ApiClient


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def disable_file(tmp_path: Path) -> Path:
    return tmp_path / "healthcheck_disable"


@pytest.fixture
def client(services: ApiServices, disable_file: Path) -> Iterator[ApiClient]:
    client = ApiClient(Observed(build_api_app(services), str(disable_file), metrics_on=True))
    yield client
    client.close()
    services.api_db.dispose()


@pytest.mark.parametrize("path", ["/healthcheck", "/image/healthcheck", "/networking/healthcheck"])
def test_healthcheck_answers_ok_in_plain_text_without_authentication(
    client: ApiClient, path: str
) -> None:
    resp = client.get(path, token=None)
    assert resp.status_code == 200
    assert resp.text == "OK"
    assert resp.headers["content-type"].startswith("text/plain")


def test_healthcheck_head_is_204_and_json_is_the_simple_document(client: ApiClient) -> None:
    assert client.request("HEAD", "/healthcheck", token=None).status_code == 204
    resp = client.get("/healthcheck", headers={"Accept": "application/json"})
    assert resp.status_code == 200
    assert resp.json() == {"detailed": False, "reasons": ["OK"]}


def test_healthcheck_is_503_while_the_disable_file_exists(
    client: ApiClient, disable_file: Path
) -> None:
    disable_file.write_text("")
    resp = client.get("/healthcheck", token=None)
    assert (resp.status_code, resp.text) == (503, "DISABLED BY FILE")
    assert client.request("HEAD", "/healthcheck", token=None).status_code == 503
    json_resp = client.get("/healthcheck", headers={"Accept": "application/json"})
    assert json_resp.json() == {"detailed": False, "reasons": ["DISABLED BY FILE"]}
    disable_file.unlink()
    assert client.get("/healthcheck", token=None).status_code == 200


def test_requests_are_counted_per_route_template_and_status(client: ApiClient) -> None:
    one = {"api": "compute", "method": "GET", "route": "/flavors/{id}"}
    listing = {"api": "compute", "method": "GET", "route": "/flavors"}
    missing = sample("openkeel_http_requests_total", **one, status="404")
    listed = sample("openkeel_http_requests_total", **listing, status="200")
    latency = sample("openkeel_http_request_duration_seconds_count", **one)
    assert client.get("/v2.1/flavors/nope").status_code == 404
    assert client.get("/v2.1/flavors/other").status_code == 404
    assert client.get("/v2.1/flavors").status_code == 200
    assert sample("openkeel_http_requests_total", **one, status="404") == missing + 2
    assert sample("openkeel_http_requests_total", **listing, status="200") == listed + 1
    assert sample("openkeel_http_request_duration_seconds_count", **one) == latency + 2


def test_metrics_exposition_lists_the_families(client: ApiClient) -> None:
    client.get("/v2.1/flavors")
    resp = client.get("/metrics", token=None)
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/plain; version=")
    for family in (
        "openkeel_http_requests_total",
        "openkeel_http_request_duration_seconds_bucket",
        "# TYPE openkeel_rpc_messages_total counter",
        "# TYPE openkeel_builds_total counter",
        "# TYPE openkeel_periodic_task_duration_seconds histogram",
    ):
        assert family in resp.text
    assert 'route="/flavors"' in resp.text


def test_metrics_off_passes_metrics_through_to_the_app(services: ApiServices) -> None:
    client = ApiClient(Observed(build_api_app(services), None, metrics_on=False))
    try:
        assert client.get("/metrics", token=None).status_code == 300  # the API's own answer
        assert client.get("/healthcheck", token=None).text == "OK"
    finally:
        client.close()
        services.api_db.dispose()


def test_api_label_follows_the_path_prefix() -> None:
    assert api_of("/image/v2/images") == "image"
    assert api_of("/identity") == "identity"
    assert api_of("/networking/v2.0/ports") == "network"
    assert api_of("/imagery") == "compute"
    assert api_of("/v2.1/servers") == "compute"
    assert api_of("/metadata/openstack/latest") == "metadata"
    assert api_of("/openstack/latest", "metadata") == "metadata"


def test_rpc_calls_and_casts_are_counted_per_topic_and_method() -> None:
    transport = get_transport(f"inproc://{uuid.uuid4().hex}")
    try:
        client = RpcClient(transport, Target(topic="compute", server="host1"))
        before = sample("openkeel_rpc_messages_total", topic="compute", method="ping", kind="cast")
        client.cast(CallContext(request_id="req-1"), "ping")
        after = sample("openkeel_rpc_messages_total", topic="compute", method="ping", kind="cast")
        assert after == before + 1
    finally:
        transport.close()


def test_rpc_messages_handled_are_timed_per_method_and_outcome() -> None:
    class Endpoint:
        rpc_namespace = None
        rpc_version = "1.0"

        def echo(self, context: CallContext, value: int) -> int:
            return value

    transport = get_transport(f"inproc://{uuid.uuid4().hex}")
    server = RpcServer(transport, Target(topic="obs"), [Endpoint()])
    server.start()
    try:
        count = sample("openkeel_rpc_handled_duration_seconds_count", method="echo", outcome="ok")
        client = RpcClient(transport, Target(topic="obs"))
        assert client.call(CallContext(), "echo", value=3) == 3
        after = sample("openkeel_rpc_handled_duration_seconds_count", method="echo", outcome="ok")
        assert after == count + 1
    finally:
        server.stop()
        transport.close()


def test_periodic_task_runs_are_timed_and_failures_counted() -> None:
    clock = FakeClock(datetime.datetime(2026, 1, 1))
    runner = PeriodicRunner(clock)

    def failing() -> None:
        raise RuntimeError("boom")

    runner.add("obs_ok", lambda: None, 10)
    runner.add("obs_fail", failing, 10)
    count = sample("openkeel_periodic_task_duration_seconds_count", task="obs_ok")
    failures = sample("openkeel_periodic_task_failures_total", task="obs_fail")
    runner.run("obs_ok")
    runner.run("obs_fail")
    assert sample("openkeel_periodic_task_duration_seconds_count", task="obs_ok") == count + 1
    assert sample("openkeel_periodic_task_failures_total", task="obs_fail") == failures + 1


def test_build_outcomes_are_counted() -> None:
    before = sample("openkeel_builds_total", outcome="active")
    metrics.count_build("active")
    assert sample("openkeel_builds_total", outcome="active") == before + 1


def test_metrics_port_serves_the_exposition_for_roles_without_http() -> None:
    conf = make_config(overrides={"metrics.port": 0})
    assert start_metrics_server(conf) is None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    conf = make_config(overrides={"metrics.port": port})
    server, thread = start_metrics_server(conf)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
            assert b"openkeel_rpc_messages" in resp.read()
    finally:
        server.shutdown()
        server.server_close()
        thread.join()

"""Prometheus metrics of every role (decision 0061), with ``prometheus-client``.

The metric objects live in the process's default registry: a Prometheus scrape sees one process,
so the counters are per process by nature. Roles record through the small functions here (one
dictionary lookup and one lock per sample: a few microseconds); ``/metrics`` on the HTTP roles
and ``[metrics] port`` on the others expose them (``openkeel.runtime.observability``).

Who records: the API apps (requests per route template and status), ``openkeel.rpc.client``
(calls and casts per method), ``openkeel.rpc.server`` (messages handled), ``openkeel.compute.operations.build`` (build outcomes),
``openkeel.runtime.periodic`` (periodic task durations).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, Counter, Histogram, generate_latest

HTTP_REQUESTS = Counter(
    "openkeel_http_requests",
    "HTTP requests answered, per API, method, route template and status.",
    ["api", "method", "route", "status"],
)
HTTP_LATENCY = Histogram(
    "openkeel_http_request_duration_seconds",
    "Time to answer an HTTP request, per API, method and route template.",
    ["api", "method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
RPC_MESSAGES = Counter(
    "openkeel_rpc_messages",
    "RPC messages sent, per topic (without the host), method and kind (call or cast).",
    ["topic", "method", "kind"],
)
RPC_FAILURES = Counter(
    "openkeel_rpc_call_failures",
    "RPC calls answered with an error or not answered, per topic and method.",
    ["topic", "method"],
)
RPC_HANDLED = Histogram(
    "openkeel_rpc_handled_duration_seconds",
    "Time an RPC server took to handle a message, per method and outcome (ok or error).",
    ["method", "outcome"],
    buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0, 120.0),
)
BUILDS = Counter(
    "openkeel_builds",
    "Server builds finished on a compute host, per outcome "
    "(active, failed, aborted, deleted, conflict).",
    ["outcome"],
)
PERIODIC_DURATION = Histogram(
    "openkeel_periodic_task_duration_seconds",
    "Run time of periodic tasks, per task.",
    ["task"],
    buckets=(0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0),
)
PERIODIC_FAILURES = Counter(
    "openkeel_periodic_task_failures", "Periodic task runs that raised, per task.", ["task"]
)

# Children of labelled metrics, cached: ``labels()`` validates and hashes every call.
_http_children: dict[tuple[str, str, str, int], tuple[Any, Any]] = {}


def observe_request(api: str, method: str, route: str, status: int, seconds: float) -> None:
    """Count one answered request and its latency (route: the template, never the raw path)."""
    key = (api, method, route, status)
    children = _http_children.get(key)
    if children is None:
        children = (
            HTTP_REQUESTS.labels(api, method, route, str(status)),
            HTTP_LATENCY.labels(api, method, route),
        )
        _http_children[key] = children
    children[0].inc()
    children[1].observe(seconds)


def rpc_topic(topic: str) -> str:
    """A topic without its server part (``compute.host1`` -> ``compute``): bounded labels."""
    return topic.partition(".")[0]


def count_rpc(topic: str, method: str, kind: str) -> None:
    RPC_MESSAGES.labels(rpc_topic(topic), method, kind).inc()


def count_rpc_failure(topic: str, method: str) -> None:
    RPC_FAILURES.labels(rpc_topic(topic), method).inc()


def observe_rpc_handled(method: str, ok: bool, seconds: float) -> None:
    RPC_HANDLED.labels(method, "ok" if ok else "error").observe(seconds)


def count_build(outcome: str) -> None:
    BUILDS.labels(outcome).inc()


@contextmanager
def timed_periodic_task(
    name: str, clock: Callable[[], float] = time.perf_counter
) -> Iterator[None]:
    """Time one run of periodic task ``name``; a run that raises is counted as a failure."""
    start = clock()
    try:
        yield
    except Exception:
        PERIODIC_FAILURES.labels(name).inc()
        raise
    finally:
        PERIODIC_DURATION.labels(name).observe(clock() - start)


def exposition() -> tuple[bytes, str]:
    """The text exposition of every metric of this process and its content type."""
    return generate_latest(), CONTENT_TYPE_LATEST

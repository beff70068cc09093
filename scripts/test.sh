#!/usr/bin/env bash
# The whole check: install into .venv, lint, type-check, start the peers the tests need
# (a real Keystone, a real neutron-server, a real Cinder), run every test. CI runs exactly this
# (.ci/run). Set CI=1 to turn the "server not reachable" skips of the PostgreSQL / MariaDB /
# Keystone / Neutron / Cinder tests into failures.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q -e '.[test,oracle]'
# cloud-init's datasource code for tests/metadata (Debian's package; not on PyPI): decision 0058
bash scripts/install-cloud-init.sh || [ -z "${CI:-}" ] || { echo "cloud-init could not be installed"; exit 1; }
echo "== ruff"; ruff check openkeel tests benchmarks; ruff format --check openkeel tests benchmarks
echo "== mypy --strict"; mypy
echo "== import contracts"; lint-imports --no-cache
if [ -n "${CI:-}" ] || [ -n "${OPENKEEL_START_KEYSTONE:-}" ]; then
    echo "== services"; bash scripts/ensure-services.sh
    echo "== keystone"; bash scripts/start-keystone.sh
    echo "== neutron"; NEUTRON_QOS=1 bash scripts/start-neutron.sh
    echo "== cinder"; bash scripts/start-cinder.sh
fi
if [ -n "${CI:-}" ] || [ -n "${OPENKEEL_START_KUBE:-}" ]; then
    echo "== kube-apiserver"; bash scripts/start-kube-apiserver.sh
fi
if [ -n "${CI:-}" ] && ! command -v chromium >/dev/null 2>&1; then
    # The noVNC page test (tests/functional/test_novnc_browser.py) drives headless Chromium.
    echo "== chromium"; (apt-get install -y -qq chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }) \
        || { echo "chromium could not be installed"; exit 1; }
fi
# Two phases: everything not marked `serial` on OPENKEEL_TEST_WORKERS pytest-xdist workers
# (whole files per worker: module fixtures are built once; every test already has its own
# databases, broker exchange, kube namespace prefix and ports), then the `serial` tests
# (tests/faults: they kill processes and restart the shared RabbitMQ / PostgreSQL) alone.
# Exit status 5 (no test selected, e.g. a path with no serial test) is not a failure.
workers=${OPENKEEL_TEST_WORKERS:-3}
started=$SECONDS
status=0
echo "== pytest, parallel (${workers} workers)"
python -m pytest -q -n "$workers" --dist loadfile --durations=15 -m "not serial" "$@" || status=$?
[ "$status" -eq 5 ] && status=0
parallel_took=$((SECONDS - started))
echo "== pytest, serial"
serial=0
python -m pytest -q --durations=10 -m serial "$@" || serial=$?
[ "$serial" -eq 5 ] && serial=0
[ "$status" -eq 0 ] && status=$serial
echo "== test suite took $((SECONDS - started)) s (parallel ${parallel_took} s; whole check: ${SECONDS} s), exit status ${status}"
exit "$status"

#!/usr/bin/env bash
# Runs one benchmark against real Nova 34.0.0 and an OpenKeel all-in-one, in one run:
#
#   bash benchmarks/run-against-nova.sh foundation|servers [extra args for benchmarks/<name>.py]
#
# (benchmarks/run-foundation.sh and run-servers.sh call it.)
# - real Nova: used as is if it answers on $REAL_NOVA_URL (default 127.0.0.1:18774); otherwise
#   started with ../shared/tools/real-nova/setup.sh (~4 min) and stopped again at the end
#   (KEEP_NOVA=1 leaves it running for the next run). Its image id comes from
#   $REAL_NOVA_BASE/env.sh (REAL_NOVA_IMAGE_ID).
# - OpenKeel: `openkeel all-in-one` on a free port in a temporary data dir (SQLite, noauth2 as
#   real Nova here, simulated compute host), with the quota config of Nova's run: key pairs
#   unlimited, and for `servers` instances, cores and ram too; stopped at the end.
# - PROFILE=1 attaches py-spy ($PY_SPY, default `py-spy` on PATH) to the OpenKeel server for
#   the whole run (collapsed stacks to $PROFILE_OUT, default /tmp/openkeel-<name>-profile.raw)
#   and prints `python -m benchmarks.hotspots` of it.
# Writes benchmarks/results/<name>-DATE.json.
set -euo pipefail
BENCH=${1:?usage: run-against-nova.sh foundation|servers [args]}
shift
case "$BENCH" in
  foundation) QUOTA='key_pairs = -1\n' ;;
  servers) QUOTA='instances = -1\ncores = -1\nram = -1\nkey_pairs = -1\n' ;;
  *) echo "run-against-nova.sh: unknown benchmark $BENCH (foundation or servers)" >&2; exit 2 ;;
esac

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
SHARED_NOVA=${SHARED_NOVA:-$(cd "$REPO/.." && pwd)/shared/tools/real-nova}
[ -d "$SHARED_NOVA" ] || SHARED_NOVA=/work/shared/tools/real-nova
REAL_NOVA_BASE=${REAL_NOVA_BASE:-/tmp/real-nova}
NOVA_URL=${REAL_NOVA_URL:-http://127.0.0.1:18774/v2.1}
PY=${PYTHON:-$REPO/.venv/bin/python}
[ -x "$PY" ] || PY=python3
log() { printf '[run-%s] %s\n' "$BENCH" "$*"; }

WORK=$(mktemp -d "/tmp/openkeel-$BENCH.XXXXXX")
OK_PID=""; STARTED_NOVA=""; SPY_PID=""
PROFILE_OUT=${PROFILE_OUT:-/tmp/openkeel-$BENCH-profile.raw}
cleanup() {
  if [ -n "$SPY_PID" ] && kill -0 "$SPY_PID" 2>/dev/null; then
    kill -INT "$SPY_PID" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$SPY_PID" 2>/dev/null || break; sleep 0.25; done
  fi
  if [ -n "$OK_PID" ] && kill -0 "$OK_PID" 2>/dev/null; then
    kill -INT -- "-$OK_PID" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$OK_PID" 2>/dev/null || break; sleep 0.25; done
    kill -KILL -- "-$OK_PID" 2>/dev/null || true
  fi
  if [ -n "$STARTED_NOVA" ] && [ "${KEEP_NOVA:-0}" != 1 ]; then
    log "stopping the real Nova this run started"
    REAL_NOVA_BASE=$REAL_NOVA_BASE bash "$SHARED_NOVA/stop.sh" || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

answers() { curl -s -o /dev/null -m 5 -w '%{http_code}' "$1/" 2>/dev/null | grep -q '^200$'; }

if answers "$NOVA_URL"; then
  log "real Nova answers on $NOVA_URL"
else
  log "real Nova not answering: running $SHARED_NOVA/setup.sh (~4 min)"
  REAL_NOVA_BASE=$REAL_NOVA_BASE bash "$SHARED_NOVA/setup.sh" >"$WORK/nova-setup.log" 2>&1 \
    || { tail -20 "$WORK/nova-setup.log"; exit 1; }
  STARTED_NOVA=1
fi
# shellcheck disable=SC1091
[ -f "$REAL_NOVA_BASE/env.sh" ] && . "$REAL_NOVA_BASE/env.sh"

PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
OK_URL=http://127.0.0.1:$PORT/v2.1
printf "[api]\nauth_strategy = noauth2\n[quota]\n$QUOTA" >"$WORK/bench.conf"
if command -v openkeel >/dev/null 2>&1; then
  OK_CMD=(openkeel)
else
  OK_CMD=("$PY" -m openkeel.cmd.main)
fi
OK_CMD+=(all-in-one --data-dir "$WORK/data" --port "$PORT" --config-file "$WORK/bench.conf")
log "starting OpenKeel: ${OK_CMD[*]}"
mkdir -p "$HERE/results"
PYTHONPATH=$REPO${PYTHONPATH:+:$PYTHONPATH} setsid "${OK_CMD[@]}" >"$WORK/openkeel.log" 2>&1 </dev/null &
OK_PID=$!
for _ in $(seq 1 120); do
  answers "$OK_URL" && break
  kill -0 "$OK_PID" 2>/dev/null || { log "OpenKeel exited:"; tail -30 "$WORK/openkeel.log"; exit 1; }
  sleep 0.5
done
answers "$OK_URL" || { log "OpenKeel did not answer on $OK_URL"; tail -30 "$WORK/openkeel.log"; exit 1; }
log "OpenKeel answers on $OK_URL (pgid $OK_PID)"

if [ "${PROFILE:-0}" = 1 ]; then
  "${PY_SPY:-py-spy}" record --nonblocking -r 100 -f raw -o "$PROFILE_OUT" -p "$OK_PID" \
    >"$WORK/py-spy.log" 2>&1 &
  SPY_PID=$!
fi

cd "$REPO"
REAL_NOVA_BASE=$REAL_NOVA_BASE "$PY" -m "benchmarks.$BENCH" \
  --nova-url "$NOVA_URL" --openkeel-url "$OK_URL" --openkeel-pid "$OK_PID" "$@"

if [ -n "$SPY_PID" ]; then
  kill -INT "$SPY_PID" 2>/dev/null || true
  wait "$SPY_PID" 2>/dev/null || true
  SPY_PID=""
  "$PY" -m benchmarks.hotspots "$PROFILE_OUT" --filter openkeel/ --top 25
fi

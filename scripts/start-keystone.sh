#!/usr/bin/env bash
# start-keystone.sh - make sure a real Keystone answers at 127.0.0.1:5000 for the Keystone
# tests (tests/api/test_keystone_auth.py). Called by scripts/test.sh under CI; run it by hand
# before those tests locally. Wraps ../shared/tools/keystone.sh (venv /tmp/keystone-venv,
# state /tmp/keystone-data, admin / admin-secret); a Keystone already answering is kept.
#   KEYSTONE_SH  path of keystone.sh      [<repo>/../shared/tools/keystone.sh]
#   KS_FORCE=1   re-run keystone.sh even when Keystone answers (re-registers endpoints)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KEYSTONE_SH=${KEYSTONE_SH:-$ROOT/../shared/tools/keystone.sh}
export KS_HOST=127.0.0.1 KS_PORT=5000 KS_WORKERS=1
export ADMIN_PASSWORD=${ADMIN_PASSWORD:-admin-secret}
export COMPUTE_URL=${COMPUTE_URL:-http://127.0.0.1:8774/v2.1}
URL="http://$KS_HOST:$KS_PORT/v3"

if [ -z "${KS_FORCE:-}" ] && curl -sf -o /dev/null --max-time 5 "$URL"; then
    echo "keystone already answering at $URL"
    exit 0
fi
if [ ! -f "$KEYSTONE_SH" ]; then
    echo "start-keystone.sh: $KEYSTONE_SH not found (set KEYSTONE_SH)" >&2
    exit 1
fi
LOG=${KS_LOG:-/tmp/keystone-start.log}
echo "starting keystone with $KEYSTONE_SH (log: $LOG; a cold venv takes a few minutes)"
# keystone.sh may inherit the caller's venv; run it from a neutral directory and environment.
if ! (cd /tmp && env -u VIRTUAL_ENV -u PYTHONPATH bash "$KEYSTONE_SH") >"$LOG" 2>&1; then
    tail -n 40 "$LOG" >&2
    echo "start-keystone.sh: keystone.sh failed" >&2
    exit 1
fi
tail -n 8 "$LOG"
curl -sf -o /dev/null --max-time 5 "$URL"

#!/usr/bin/env bash
# Foundation benchmark runner: real Nova 34.0.0 vs an OpenKeel all-in-one, in one run.
#
#   bash benchmarks/run-foundation.sh [extra args for benchmarks/foundation.py]
#
# See benchmarks/run-against-nova.sh for what it starts, the environment it reads and what it
# writes.
exec bash "$(dirname "${BASH_SOURCE[0]}")/run-against-nova.sh" foundation "$@"

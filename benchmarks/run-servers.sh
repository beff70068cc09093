#!/usr/bin/env bash
# Servers benchmark runner: real Nova 34.0.0 vs an OpenKeel all-in-one, in one run.
#
#   bash benchmarks/run-servers.sh [extra args for benchmarks/servers.py]
#
# See benchmarks/run-against-nova.sh for what it starts, the environment it reads and what it
# writes.
exec bash "$(dirname "${BASH_SOURCE[0]}")/run-against-nova.sh" servers "$@"

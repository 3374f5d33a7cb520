#!/usr/bin/env bash
# Embedded against jobbie dev, as recorded in docs/BENCHMARKS.md
# ("Embedded"): the example's BenchmarkLifecycle (examples/embedded)
# enqueues and works JOBS jobs through the example's connect, on an
# embedded node, then on a fresh `jobbie dev` of path/to/jobbie, RUNS
# times in turn. Each line gives jobs/s and CPU per job of everything
# that ran (for dev: the load in the test process and jobbie dev's own,
# from /proc, so Linux only).
# Usage: scripts/bench-embedded.sh [path/to/jobbie] [jobs] [runs]
set -euo pipefail
BIN=$(realpath "${1:-bin/jobbie}")
JOBS=${2:-10000}
RUNS=${3:-3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
go test -c -o "$TMP/embedded.test" ./examples/embedded
cd examples/embedded
for r in $(seq 1 "$RUNS"); do
	for mode in embedded dev; do
		JOBBIE_BIN=$BIN "$TMP/embedded.test" -test.run '^$' -test.bench "BenchmarkLifecycle/$mode\$" \
			-test.benchtime "${JOBS}x" 2>/dev/null | grep '^BenchmarkLifecycle' || true
	done
done

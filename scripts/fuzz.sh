#!/usr/bin/env bash
# Runs every fuzz target of the module (every func Fuzz* in a _test.go
# file) for FUZZTIME each, one after another; stops at the first failure,
# whose input Go keeps under the package's testdata/fuzz. `make test` runs
# only their seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}
pkgs=$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u)
for dir in $pkgs; do
	for f in $(grep -h -o '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go | sed 's/^func //'); do
		echo "fuzz $dir $f for $FUZZTIME"
		"$GO" test -run '^$' -fuzz "^$f\$" -fuzztime "$FUZZTIME" "$dir/"
	done
done

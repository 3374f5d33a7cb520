#!/usr/bin/env bash
# The protocol's checks (make proto-check): buf lint, buf breaking against
# the committed baseline image (proto/baseline.binpb; `make
# proto-baseline` moves it on purpose), KEDA's external scaler protocol
# against its own image (proto/externalscaler.binpb, which never moves:
# the protocol is KEDA's), and that the committed generated code is what
# proto/ generates now. Only Go tools pinned in go.mod run:
# no network beyond the Go module proxy.
set -euo pipefail
cd "$(dirname "$0")/../proto"
GO=${GO:-go}
"$GO" tool buf lint
"$GO" tool buf breaking --against baseline.binpb
"$GO" tool buf breaking --against externalscaler.binpb --path externalscaler
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$GO" tool buf generate --output "$tmp"
if ! diff -r gen "$tmp/gen"; then
	echo "proto/gen is not what proto/ generates: run 'cd proto && go tool buf generate' and commit it" >&2
	exit 1
fi

#!/usr/bin/env bash
# Runs the benchmarks recorded in docs/BENCHMARKS.md against a fresh
# `jobbie dev` on loopback: durable writes, load generator on this machine.
# Usage: scripts/bench.sh [path/to/jobbie] [duration]
set -euo pipefail
BIN=${1:-bin/jobbie}
DUR=${2:-20s}
DIR=$(mktemp -d)
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -rf "$DIR"' EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
GW=127.0.0.1:$(port); CTL=127.0.0.1:$(port); SH=127.0.0.1:$(port)
"$BIN" dev --data-dir "$DIR/data" --addr "$GW" --control-addr "$CTL" --shard-addr "$SH" > "$DIR/dev.log" 2>&1 &
PID=$!
for _ in $(seq 300); do grep -q "Jobbie is running" "$DIR/dev.log" && break; sleep 0.1; done
grep -q "Jobbie is running" "$DIR/dev.log" || { cat "$DIR/dev.log"; exit 1; }
KEY="$DIR/data/owner.key"
TID=$(python3 -c 'import base64,json,sys; t=open(sys.argv[1]).read().split(".")[1]; t+="="*(-len(t)%4); print(json.loads(base64.urlsafe_b64decode(t))["tid"])' "$KEY")

run() { echo; echo "\$ jobbie bench $*"; "$BIN" bench "$@" 2>/dev/null | sed -n '/^jobbie bench/,$p'; }

echo "machine: $(nproc) cores, $(uname -sr), $(go version | cut -d' ' -f3)"
run --url "http://$GW" --key-file "$KEY" --duration "$DUR" --batch 100 --producers 2 --workers 64 --queue batch100
run --url "http://$GW" --key-file "$KEY" --duration "$DUR" --batch 1 --producers 16 --workers 32 --queue single
run --url "http://$GW" --key-file "$KEY" --duration "$DUR" --batch 100 --fetch-batch 100 --ack-batch 100 --producers 3 --workers 6 --queue batchwork
run --url "http://$GW" --key-file "$KEY" --duration "$DUR" --latency --queue latency
PKI="$DIR/data/pki"
run --direct "https://$SH" --tls-cert "$PKI/operator.crt" --tls-key "$PKI/operator.key" --tls-ca "$PKI/ca.crt" --shard-namespace "$TID/default" \
  --duration "$DUR" --batch 100 --producers 2 --workers 64 --queue direct100

# Stop the server first: its background compactions would skew the Go benchmarks.
kill $PID; wait $PID 2>/dev/null || true
echo
echo "\$ go test -run '^\$' -bench . ./internal/replica/ ./shard/ ./gateway/"
go test -run '^$' -bench 'BenchmarkPropose|BenchmarkEngineLifecycle|BenchmarkProxy' -benchtime 3s ./internal/replica/ ./shard/ ./gateway/ 2>/dev/null | grep -E '^(Benchmark|ok)'

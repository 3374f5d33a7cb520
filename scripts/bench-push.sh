#!/usr/bin/env bash
# Push delivery runs recorded in docs/BENCHMARKS.md: a fresh `jobbie dev`
# trusting the bench's receiver certificate, then `jobbie bench --push`
# flat out (enqueues in batches of 100, so the producers leave the cores
# to the dispatcher) and paced at 1,000 jobs/s (one job per enqueue).
# Usage: scripts/bench-push.sh [path/to/jobbie] [duration] [rounds]
set -euo pipefail
BIN=${1:-bin/jobbie}
DUR=${2:-10s}
ROUNDS=${3:-1}
DIR=$(mktemp -d)
PID=
trap '[ -n "$PID" ] && { kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; }; rm -rf "$DIR"' EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
CERT="$DIR/receiver.crt" RKEY="$DIR/receiver.key"
# The first run only writes the receiver's self-signed certificate.
"$BIN" bench --push --push-cert "$CERT" --push-key "$RKEY" >/dev/null 2>&1 || true
[ -f "$CERT" ] || { echo "no receiver certificate written"; exit 1; }

GW=127.0.0.1:$(port); CTL=127.0.0.1:$(port); SH=127.0.0.1:$(port)
"$BIN" dev --data-dir "$DIR/data" --addr "$GW" --control-addr "$CTL" --shard-addr "$SH" \
  --push-allow-private --push-ca-file "$CERT" > "$DIR/dev.log" 2>&1 &
PID=$!
for _ in $(seq 300); do grep -q "Jobbie is running" "$DIR/dev.log" && break; sleep 0.1; done
grep -q "Jobbie is running" "$DIR/dev.log" || { cat "$DIR/dev.log"; exit 1; }
KEY="$DIR/data/owner.key"

run() {
  echo; echo "\$ jobbie bench $*   (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
  "$BIN" bench --url "http://$GW" --key-file "$KEY" --push --push-cert "$CERT" --push-key "$RKEY" "$@" 2>/dev/null | sed -n '/^jobbie bench/,$p'
}

echo "machine: $(nproc) cores, $(uname -sr)"
for _ in $(seq "$ROUNDS"); do
  run --duration "$DUR" --batch 100 --queue pushflat
  run --duration "$DUR" --rate 1000 --queue pushpaced
done

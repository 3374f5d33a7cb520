#!/usr/bin/env bash
# Measures the CPU a job costs all-in, as recorded in docs/BENCHMARKS.md
# ("Single-call path"): each run starts a fresh `jobbie dev` (durable),
# loads its gateway with `jobbie bench` for DUR and prints the completed
# jobs/s, the server's CPU per job (user+sys of `jobbie dev` and every
# process it started, from /proc, so Linux only) and the load generator's
# (from its rusage, via `time`), and the server's peak resident memory
# (VmHWM of `jobbie dev` itself). The default load is W1: one job per
# enqueue, fetch and ack call, 4 producers and 16 workers.
# Usage: scripts/bench-cpu.sh [path/to/jobbie] [duration] [runs]
# LOAD sets the bench flags (default "--batch 1 --producers 4 --workers 16").
# BASE=path/to/other/jobbie alternates builds: each round runs BASE, then
# this one; both are loaded by this build's bench. Medians come last.
# BASE_BENCH=path/to/other/jobbie alternates load generators instead: each
# round this build's server is loaded by BASE_BENCH's bench ("base"), then
# by this build's ("this"), to compare the bench's own (client) CPU.
# PPROF=host:port serves the server's profiles there (`--pprof-addr`).
# GRPC=1 starts the gateway's gRPC port too and passes it to the bench as
# --grpc-url, for LOAD="--transport stream …" (the worker stream).
set -euo pipefail
BIN=$(realpath "${1:-bin/jobbie}")
DUR=${2:-10s}
RUNS=${3:-3}
LOAD=${LOAD:---batch 1 --producers 4 --workers 16}
BASE=${BASE:+$(realpath "$BASE")}
BASE_BENCH=${BASE_BENCH:+$(realpath "$BASE_BENCH")}
TICK=$(getconf CLK_TCK)
DIR=""
PID=""
cleanup() {
	[ -n "$PID" ] && { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }
	[ -n "$DIR" ] && rm -rf "$DIR"
	PID=""
	DIR=""
}
trap cleanup EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# ticks prints the user+sys clock ticks of `jobbie dev` and every process
# it started (cluster.json lists them when there are any).
ticks() {
	{
		echo "$PID"
		if [ -f "$DIR/data/cluster.json" ]; then python3 -c '
import json, sys
for p in json.load(open(sys.argv[1]))["processes"]: print(p["pid"])' "$DIR/data/cluster.json"; fi
	} | while read -r p; do awk '{print $14+$15}' "/proc/$p/stat" 2>/dev/null || true; done | awk '{s+=$1} END{print s+0}'
}

# run starts build $2 and loads it with the bench of $3 (default BIN);
# prints "$1 RATE jobs/s server=… client=…" and leaves RATE, SRV and CLI set.
run() {
	local bench=${3:-$BIN}
	DIR=$(mktemp -d)
	local gw=127.0.0.1:$(port) ctl=127.0.0.1:$(port) sh=127.0.0.1:$(port) grpc="" grpcurl=""
	if [ -n "${GRPC:-}" ]; then grpc=127.0.0.1:$(port) grpcurl=http://$grpc; fi
	"$2" dev --data-dir "$DIR/data" --addr "$gw" --control-addr "$ctl" --shard-addr "$sh" \
		${grpc:+--grpc-addr "$grpc"} ${PPROF:+--pprof-addr "$PPROF"} >"$DIR/dev.log" 2>&1 &
	PID=$!
	for _ in $(seq 600); do grep -qs "Jobbie is running" "$DIR/dev.log" && break; sleep 0.1; done
	grep -q "Jobbie is running" "$DIR/dev.log" || { cat "$DIR/dev.log"; exit 1; }
	local t0 t1 jobs
	t0=$(ticks)
	# shellcheck disable=SC2086
	/usr/bin/time -f '%U %S' -o "$DIR/time" "$bench" bench --url "http://$gw" --key-file "$DIR/data/owner.key" \
		--duration "$DUR" --queue w1 ${grpcurl:+--grpc-url "$grpcurl"} $LOAD >"$DIR/bench.out" 2>/dev/null
	t1=$(ticks)
	jobs=$(sed -n '/^jobbie bench/,$p' "$DIR/bench.out" | awk '$1=="completed"{print $2}')
	RATE=$(sed -n '/^jobbie bench/,$p' "$DIR/bench.out" | awk '$1=="completed"{sub("/s","",$4); print $4}')
	SRV=$(awk -v a="$t0" -v b="$t1" -v t="$TICK" -v n="$jobs" 'BEGIN{printf "%.1f", (b-a)/t*1e6/n}')
	CLI=$(awk -v n="$jobs" '{printf "%.1f", ($1+$2)*1e6/n}' "$DIR/time")
	local rss
	rss=$(awk '$1=="VmHWM:"{printf "%d", $2/1024}' "/proc/$PID/status" 2>/dev/null || true)
	printf '%s %s jobs/s  server %s µs/job  client %s µs/job  all %.1f µs/job  peak RSS %s MB\n' "$1" "$RATE" "$SRV" "$CLI" "$(awk -v a="$SRV" -v b="$CLI" 'BEGIN{print a+b}')" "${rss:-?}"
	cleanup
}

median() { sort -n | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
summary() { # name rates srvs clis
	printf '%s median: %s jobs/s  server %s µs/job  client %s µs/job\n' "$1" \
		"$(tr ' ' '\n' <<<"$2" | median)" "$(tr ' ' '\n' <<<"$3" | median)" "$(tr ' ' '\n' <<<"$4" | median)"
}

echo "machine: $(nproc) cores, $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg); load: $LOAD, $DUR per run"
br="" bs="" bc="" nr="" ns="" nc=""
for i in $(seq "$RUNS"); do
	if [ -n "$BASE" ] || [ -n "$BASE_BENCH" ]; then
		run "run $i, base:" "${BASE:-$BIN}" "${BASE_BENCH:-$BIN}"
		br="$br $RATE" bs="$bs $SRV" bc="$bc $CLI"
	fi
	run "run $i, this:" "$BIN"
	nr="$nr $RATE" ns="$ns $SRV" nc="$nc $CLI"
done
[ -n "$BASE$BASE_BENCH" ] && summary base "${br# }" "${bs# }" "${bc# }"
summary this "${nr# }" "${ns# }" "${nc# }"

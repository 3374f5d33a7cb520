#!/usr/bin/env bash
# Compares a three-node shard cluster with a single node, as recorded in
# docs/BENCHMARKS.md ("Three-node shard clusters"): pairs of runs, single
# node then three nodes, each on a fresh `jobbie dev` (durable), with the
# batch-worker load through the gateway. Prints each run's completed jobs/s
# and the CPU each process spent per completed job (from /proc, so Linux
# only), then the median of each side and their ratio.
# Usage: scripts/bench-cluster.sh [path/to/jobbie] [duration] [pairs]
# PRODUCERS and WORKERS set the load (default 12 and 36); LOAD the other
# bench flags (default batches of 100: --batch 100 --fetch-batch 100
# --ack-batch 100; LOAD="--batch 1" sends one job per call).
# GRPC=1 starts the gateway's gRPC port too and passes it to the bench as
# --grpc-url, for LOAD="--transport stream …" (the worker stream).
# BASE=path/to/other/jobbie compares two builds instead: each pair runs
# BASE then this build, both on clusters of REPLICAS nodes (default 3),
# loaded by this build's bench.
# EFFECTS=1 passes dev --replicate-effects to clusters of several nodes
# (followers apply the leader's batches instead of running the commands;
# the default since 2026-11-30, and a single node keeps proposing
# commands, which are smaller), EFFECTS=0 --replicate-effects=false;
# unset, each build runs its default.
# PPROF=host:port passes dev --pprof-addr: every process then serves its
# profiles on a port of its own, listed (with its role and node) in
# $DIR/data/cluster.json and printed once the cluster is up.
set -euo pipefail
BIN=$(realpath "${1:-bin/jobbie}")
DUR=${2:-15s}
PAIRS=${3:-3}
PRODUCERS=${PRODUCERS:-12}
WORKERS=${WORKERS:-36}
BASE=${BASE:+$(realpath "$BASE")}
REPLICAS=${REPLICAS:-3}
LOAD=${LOAD:---batch 100 --fetch-batch 100 --ack-batch 100}
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

# cpu prints "pid name ticks" for `jobbie dev` and every process it
# started (listed in cluster.json).
cpu() {
	{
		echo "$PID dev"
		if [ -f "$DIR/data/cluster.json" ]; then python3 -c '
import json, sys
for p in json.load(open(sys.argv[1]))["processes"]:
    print(p["pid"], p["role"] + ("-" + p["node_id"] if p.get("role") == "shard" else ""))' "$DIR/data/cluster.json"; fi
	} | while read -r p name; do
		if [ -r "/proc/$p/stat" ]; then echo "$p $name $(awk '{print $14+$15}' "/proc/$p/stat")"; fi
	done
}

# run starts a cluster of $2 replicas of build $3 (default BIN), loads it
# for $DUR and prints one line: "$1 jobs/s role=us/job ..."; RATE is left
# holding jobs/s.
run() {
	DIR=$(mktemp -d)
	local gw=127.0.0.1:$(port) ctl=127.0.0.1:$(port) sh=127.0.0.1:$(port) grpc="" grpcurl=""
	if [ -n "${GRPC:-}" ]; then grpc=127.0.0.1:$(port) grpcurl=http://$grpc; fi
	local eff=""
	if [ "${EFFECTS:-}" = 1 ] && [ "$2" -gt 1 ]; then eff=--replicate-effects; fi
	if [ "${EFFECTS:-}" = 0 ] && [ "$2" -gt 1 ]; then eff=--replicate-effects=false; fi
	"${3:-$BIN}" dev --data-dir "$DIR/data" --addr "$gw" --control-addr "$ctl" --shard-addr "$sh" --replicas "$2" \
		${grpc:+--grpc-addr "$grpc"} ${PPROF:+--pprof-addr "$PPROF"} $eff >"$DIR/dev.log" 2>&1 &
	PID=$!
	for _ in $(seq 600); do grep -q "Jobbie is running" "$DIR/dev.log" && break; sleep 0.1; done
	grep -q "Jobbie is running" "$DIR/dev.log" || { cat "$DIR/dev.log"; exit 1; }
	if [ -n "${PPROF:-}" ] && [ -f "$DIR/data/cluster.json" ]; then python3 -c '
import json, sys
for p in json.load(open(sys.argv[1]))["processes"]:
    print("pprof:", p["role"] + ("-" + p["node_id"] if p.get("role") == "shard" else ""), p.get("pprof", ""))' "$DIR/data/cluster.json" >&2; fi
	cpu | sort >"$DIR/cpu0"
	"$BIN" bench --url "http://$gw" --key-file "$DIR/data/owner.key" --duration "$DUR" --queue batchwork \
		${grpcurl:+--grpc-url "$grpcurl"} $LOAD --producers "$PRODUCERS" --workers "$WORKERS" >"$DIR/bench.out" 2>/dev/null &
	local bp=$! bt=0
	# The load generator's own CPU, read until it exits.
	while kill -0 "$bp" 2>/dev/null; do
		bt=$(awk '{print $14+$15}' "/proc/$bp/stat" 2>/dev/null || echo "$bt")
		sleep 0.2
	done
	wait "$bp"
	cpu | sort >"$DIR/cpu1"
	local jobs rate
	local jobs
	jobs=$(sed -n '/^jobbie bench/,$p' "$DIR/bench.out" | awk '$1=="completed"{print $2}')
	RATE=$(sed -n '/^jobbie bench/,$p' "$DIR/bench.out" | awk '$1=="completed"{sub("/s","",$4); print $4}')
	printf '%s %s jobs/s, CPU per job:' "$1" "$RATE"
	join "$DIR/cpu0" "$DIR/cpu1" | awk -v n="$jobs" -v t="$TICK" -v b="$bt" '
		{d=($5-$3)/t; all+=d; if (d > 0) printf "  %s=%.1fus", $2, d*1e6/n}
		END{all+=b/t; printf "  bench=%.1fus  all=%.1fus\n", b/t*1e6/n, all*1e6/n}'
	cleanup
}

median() { sort -n | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "machine: $(nproc) cores, $(uname -sr); load: $LOAD --producers $PRODUCERS --workers $WORKERS, $DUR per run"
if [ -n "$BASE" ]; then
	bases=()
	news=()
	for i in $(seq "$PAIRS"); do
		run "pair $i, base:" "$REPLICAS" "$BASE"
		bases+=("$RATE")
		run "pair $i, this:" "$REPLICAS" "$BIN"
		news+=("$RATE")
	done
	b=$(printf '%s\n' "${bases[@]}" | median)
	n=$(printf '%s\n' "${news[@]}" | median)
	awk -v b="$b" -v n="$n" 'BEGIN{printf "median: base %.0f jobs/s, this build %.0f jobs/s: %.0f%%\n", b, n, 100*n/b}'
	exit 0
fi
singles=()
triples=()
for i in $(seq "$PAIRS"); do
	run "pair $i, one node:   " 1
	singles+=("$RATE")
	run "pair $i, three nodes:" 3
	triples+=("$RATE")
done
s=$(printf '%s\n' "${singles[@]}" | median)
t=$(printf '%s\n' "${triples[@]}" | median)
awk -v s="$s" -v t="$t" 'BEGIN{printf "median: one node %.0f jobs/s, three nodes %.0f jobs/s: %.0f%%\n", s, t, 100*t/s}'

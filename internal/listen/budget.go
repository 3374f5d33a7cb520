package listen

import (
	"syscall"
	"time"
)

// DefaultHandshakeTimeout is how long a tunnel or Raft connection may
// take to finish its TLS handshake: ample for a real peer, short enough
// that a flood of silent connections gives its descriptors back soon.
const DefaultHandshakeTimeout = 5 * time.Second

// DefaultMaxPendingPerAddr caps the unfinished handshakes one client
// address (an IPv6 /64) may hold on a tunnel or Raft port: a node makes
// one connection at a time, a Raft peer a few.
const DefaultMaxPendingPerAddr = 16

// Budget splits a process's descriptor limit (RLIMIT_NOFILE) between its
// ports, so that a flood on one leaves the others and the process's own
// files and calls enough to work with.
type Budget struct {
	Limit int // the descriptor limit it was made from
	// Public is the public port's connection cap: what is left once
	// Reserved and twice Pending (a tunnel and a Raft port) are set
	// aside, and at least a quarter of the limit.
	Public int
	// Pending caps the unfinished handshakes of a tunnel or Raft port:
	// a sixteenth of the limit, between 16 and 1,024.
	Pending int
	// Reserved is for everything else: Pebble's files, Raft's and the
	// internal ports' established connections, outgoing calls, gossip,
	// metrics (a quarter of the limit, at least 128).
	Reserved int
}

// BudgetOf splits limit descriptors.
func BudgetOf(limit int) Budget {
	b := Budget{Limit: limit, Reserved: max(limit/4, 128), Pending: min(max(limit/16, 16), 1024)}
	b.Public = max(limit-b.Reserved-2*b.Pending, limit/4, 1)
	return b
}

// ProcessBudget is BudgetOf this process's descriptor limit (Go raises
// the soft limit to the hard one at start), or of 1,024 if it cannot be
// read.
func ProcessBudget() Budget {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur == 0 {
		return BudgetOf(1024)
	}
	return BudgetOf(int(min(r.Cur, 1<<30)))
}

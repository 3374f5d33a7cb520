package selfhosted

import (
	"context"
	"log/slog"
	"time"
)

// Registrar is a shard node that registers its cluster with control
// (*shard.Node).
type Registrar interface {
	IsLeader() bool
	// Register sends the members the node knows to controlURL, unless
	// they are what last (a signature Register returned) says was sent.
	Register(ctx context.Context, controlURL string, capacity uint64, last string) (string, error)
	// Subscribe signals each change of the node's Raft state.
	Subscribe() (<-chan struct{}, func())
}

// Register keeps the control plane's record of a hosted shard current
// (--control), until ctx ends: the leader registers the members it knows
// on election, when membership changes, and every minute. A failure is
// logged and tried again at the next of those.
func Register(ctx context.Context, node Registrar, controlURL string, capacity uint64, log *slog.Logger) {
	changes, cancel := node.Subscribe()
	defer cancel()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	last := ""
	for {
		if node.IsLeader() {
			sig, err := node.Register(ctx, controlURL, capacity, last)
			switch {
			case err != nil && ctx.Err() == nil:
				log.Warn("shard: register with control", "control", controlURL, "err", err)
				last = ""
			case err == nil:
				last = sig
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changes:
		case <-t.C:
			last = "" // refresh even when nothing changed
		case <-time.After(5 * time.Second): // members' HTTP addresses arrive by gossip
		}
	}
}

// Package shard is one node of a shard cluster: it assembles the job
// engine's parts (see DESIGN.md in this folder) into a process role. New
// opens the replicated state (internal/replica running shard/engine's
// state machine), starts the leader's loops (shard/leader) and builds the
// HTTP API (shard/api) over the service (shard/service); Start serves it
// and joins the gossip pool; Stop undoes all of it in order.
package shard

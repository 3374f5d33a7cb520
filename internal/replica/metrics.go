package replica

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobbie/jobbie/internal/obs"
)

// Metrics of every replicated group in the process, labelled by group
// (Config.Name): how long applying a Raft batch takes, how many commands
// group commit packed into it, the entries of each kind, leadership, and admission (admit.go): the
// proposals waiting and those refused for want of room.
var (
	applySeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "jobbie_raft_apply_seconds", Help: "Time to apply one batch of committed Raft entries to Pebble.",
		Buckets: prometheus.ExponentialBuckets(50e-6, 2, 14),
	}, []string{"group"})
	applyCommands = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "jobbie_raft_apply_commands", Help: "Commands applied per batch (group commit size).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 11),
	}, []string{"group"})
	isLeader = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "jobbie_raft_leader", Help: "1 while this node leads its group.",
	}, []string{"group"})
	appliedIndex = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "jobbie_raft_applied_index", Help: "Last Raft index applied to the state.",
	}, []string{"group"})
	pendingProposals = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "jobbie_raft_pending_proposals", Help: "Proposals waiting for a Raft entry after the last one was formed.",
	}, []string{"group"})
	appliedEntries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jobbie_raft_entries_total",
		Help: "Raft entries applied, by kind: commands (every member runs them) or effects (the leader's batch, Config.Effects).",
	}, []string{"group", "kind"})
	refusedProposals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jobbie_raft_refused_proposals_total",
		Help: "Proposals refused because their fairness key's share (key_busy) or the whole pending queue (busy) stayed full.",
	}, []string{"group", "reason"})
)

func init() {
	obs.Registry.MustRegister(applySeconds, applyCommands, isLeader, appliedIndex, pendingProposals, appliedEntries, refusedProposals)
}

// observeApply records one applied batch.
func (n *Node) observeApply(cmds, effects, commands int, d time.Duration) {
	applySeconds.WithLabelValues(n.cfg.Name).Observe(d.Seconds())
	if effects > 0 {
		appliedEntries.WithLabelValues(n.cfg.Name, "effects").Add(float64(effects))
	}
	if commands > 0 {
		appliedEntries.WithLabelValues(n.cfg.Name, "commands").Add(float64(commands))
	}
	applyCommands.WithLabelValues(n.cfg.Name).Observe(float64(cmds))
	appliedIndex.WithLabelValues(n.cfg.Name).Set(float64(n.fsm.applied.Load()))
	if n.cfg.Observe != nil {
		n.cfg.Observe(cmds, d)
	}
}

// observeRefusal counts a proposal refused for want of room.
func (n *Node) observeRefusal(err error) {
	switch {
	case errors.Is(err, ErrKeyBusy):
		refusedProposals.WithLabelValues(n.cfg.Name, "key_busy").Inc()
	case errors.Is(err, ErrBusy):
		refusedProposals.WithLabelValues(n.cfg.Name, "busy").Inc()
	}
}

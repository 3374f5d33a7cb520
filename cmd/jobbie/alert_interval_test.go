package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// --alert-interval reaches the shard's leader: with 200ms, a rule's
// evaluations (evaluated_at) come well under the 15s default apart.
func TestDevAlertIntervalReachesTheShard(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t, "--alert-interval", "200ms")
	ctx := t.Context()
	_, err := d.owner.CreateAlertRule(ctx, client.AlertRuleRequest{Name: "backlog", Kind: wire.AlertQueueDepth, Queue: "q", Threshold: 10, For: "1m"})
	require.NoError(t, err)
	evaluated := func(after time.Time) time.Time {
		var at time.Time
		deadline := time.Now().Add(30 * time.Second)
		for at.IsZero() || !at.After(after) {
			require.True(t, time.Now().Before(deadline), "no evaluation after %s", after)
			r, err := d.owner.GetAlertRule(ctx, "backlog")
			require.NoError(t, err)
			if r.EvaluatedAt != nil {
				at = *r.EvaluatedAt
			}
			time.Sleep(20 * time.Millisecond)
		}
		return at
	}
	first := evaluated(time.Time{})
	second := evaluated(first)
	require.Less(t, second.Sub(first), 5*time.Second, "evaluations %s and %s", first, second)
}

// An interval out of range is refused naming the setting, for both
// roles that take it, before anything starts.
func TestAlertIntervalOutOfRange(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"dev", "--alert-interval", "10ms", "--dry-run"},
		{"shard", "--node-id", "n1", "--data-dir", t.TempDir(), "--alert-interval", "2h", "--dry-run"},
	} {
		_, _, err := runJobbie(t, "", args...)
		require.Error(t, err, "%v", args)
		require.Contains(t, err.Error(), "alert-interval", "%v", args)
	}
	out, _, err := runJobbie(t, "", "shard", "--node-id", "n1", "--data-dir", t.TempDir(), "--alert-interval", "1s", "--dry-run")
	require.NoError(t, err)
	require.Contains(t, out, "alert_interval: 1s")
}

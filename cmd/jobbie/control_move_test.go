package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// The move commands start, follow, list, show and cancel moves on a real
// control plane. Its two shards listen nowhere, so a move fails at its
// first step (begin on the target): --wait reports that and exits with an
// error; control's refusals come back as the command's error.
func TestControlMoveCommands(t *testing.T) {
	t.Parallel()
	srv, flags := opControl(t, "s1", "s2")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	run := func(args ...string) (string, error) {
		out, _, err := runJobbie(t, "", append(args, flags...)...)
		return out, err
	}
	ct, err := srv.CreateTenant(ctx, "acme")
	require.NoError(t, err)
	tid := ct.Tenant.ID
	ns, err := srv.CreateNamespace(ctx, tid, "orders")
	require.NoError(t, err)
	to := map[string]string{"s1": "s2", "s2": "s1"}[ns.ShardID]

	out, err := run("control", "move", "--tenant", tid, "--namespace", "orders", "--to", to, "--wait")
	require.ErrorContains(t, err, "failed")
	require.ErrorContains(t, err, "begin on target shard "+to)
	require.Contains(t, out, "copying")
	require.Contains(t, out, "failed")

	out, err = run("control", "move", "--tenant", tid, "--namespace", "orders", "--to", to, "-o", "json")
	require.NoError(t, err)
	var m wire.Move
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.Equal(t, "orders", m.Namespace)
	require.Equal(t, to, m.ToShard)

	out, err = run("control", "moves", "--tenant", tid)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	require.Contains(t, lines[0], "STATE")
	require.Contains(t, lines[1], m.ID, "newest first")

	out, err = run("control", "moves", m.ID, "-o", "json")
	require.NoError(t, err)
	var one wire.Move
	require.NoError(t, json.Unmarshal([]byte(out), &one))
	require.Equal(t, m.ID, one.ID)

	// Cancelling a move that has ended answers it as it ended.
	require.Eventually(t, func() bool {
		got, err := srv.Move(ctx, m.ID)
		return err == nil && got.State == wire.MoveFailed
	}, 20*time.Second, 20*time.Millisecond)
	out, err = run("control", "moves", "cancel", m.ID)
	require.NoError(t, err)
	require.Contains(t, out, "failed")

	out, err = run("control", "moves", "--state", "failed", "-o", "json")
	require.NoError(t, err)
	var l wire.MoveList
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Len(t, l.Moves, 2)

	_, err = run("control", "move", "--tenant", tid, "--namespace", "orders", "--to", ns.ShardID)
	require.ErrorContains(t, err, "field to_shard")
	_, err = run("control", "move", "--tenant", tid, "--namespace", "nope", "--to", to)
	require.ErrorContains(t, err, "not_found")
	_, err = run("control", "moves", "cancel", "mov_nope")
	require.ErrorContains(t, err, "not_found")
	_, err = run("control", "moves", "--state", "nope")
	require.ErrorContains(t, err, "field state")
	_, err = run("control", "move", "--tenant", tid, "--namespace", "orders")
	require.ErrorContains(t, err, "to")
}

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
	"github.com/jobbie/jobbie/wire"
)

// `jobbie alerts` against jobbie dev: create, list, get, update and
// delete, each checked against what the API then holds (read as JSON and
// YAML), bad flags refused by the API naming the field and nothing
// changed, and a viewer reads but cannot change.
func TestAlertCommandsAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t)
	read := func(name string) wire.AlertRule {
		t.Helper()
		var r wire.AlertRule
		require.NoError(t, json.Unmarshal([]byte(d.run(t, "alerts", "get", name, "-o", "json")), &r))
		return r
	}

	out := d.run(t, "alerts", "create", "backlog", "--kind", "queue_depth_above", "--queue", "emails", "--threshold", "1000", "--for", "5m")
	require.Equal(t, "backlog", clitest.Field(out, "ALERT"), out)
	require.Equal(t, "ok", clitest.Field(out, "STATE"), out)
	r := read("backlog")
	require.Equal(t, wire.AlertQueueDepth, r.Kind)
	require.Equal(t, "emails", r.Queue)
	require.Equal(t, 1000.0, r.Threshold)
	require.Equal(t, "5m", r.For)
	require.True(t, r.Enabled)

	d.run(t, "alerts", "create", "idle", "--kind", "no_worker", "--for", "2m", "--disabled")
	lines := clitest.TableLines(d.run(t, "alerts"))
	require.Equal(t, [][]string{{"NAME", "KIND", "QUEUE", "THRESHOLD", "FOR", "ENABLED", "STATE", "SINCE"},
		{"backlog", "queue_depth_above", "emails", "1000", "5m", "true", "ok", "-"},
		{"idle", "no_worker", "*", "-", "2m", "false", "ok", "-"}}, lines)
	var listed []wire.AlertRule
	require.NoError(t, json.Unmarshal([]byte(d.run(t, "alerts", "list", "-o", "json")), &listed))
	require.Len(t, listed, 2)
	require.Contains(t, d.run(t, "alerts", "get", "idle", "-o", "yaml"), "kind: no_worker")

	d.run(t, "alerts", "update", "backlog", "--kind", "failure_rate_above", "--queue", "emails", "--threshold", "20", "--for", "10m", "--min-count", "50")
	r = read("backlog")
	require.Equal(t, wire.AlertFailureRate, r.Kind)
	require.Equal(t, 20.0, r.Threshold)
	require.Equal(t, 50, r.MinCount)

	for _, tc := range []struct {
		args  []string
		field string
	}{
		{[]string{"--kind", "louder", "--for", "1m"}, "kind"},
		{[]string{"--kind", "failure_rate_above", "--threshold", "120", "--for", "1m"}, "threshold"},
		{[]string{"--kind", "dead_increase", "--threshold", "1", "--for", "soon"}, "for"},
		{[]string{"--kind", "no_worker", "--for", "1m", "--min-count", "3"}, "min_count"},
	} {
		_, err := d.as(t, d.ownerFile, append([]string{"alerts", "update", "backlog"}, tc.args...)...)
		e, ok := client.AsError(err)
		require.True(t, ok, "%v: %v", tc.args, err)
		require.Equal(t, 400, e.Status, "%v", err)
		require.Equal(t, tc.field, e.Field, "%v", err)
	}
	require.Equal(t, wire.AlertFailureRate, read("backlog").Kind, "nothing changed")
	_, err := d.as(t, d.ownerFile, "alerts", "get", "nope")
	e, ok := client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, 404, e.Status)

	viewerFile := d.keyFile(t, "v", "viewer")
	out, err = d.as(t, viewerFile, "alerts", "get", "backlog")
	require.NoError(t, err)
	require.Contains(t, out, "failure_rate_above")
	_, err = d.as(t, viewerFile, "alerts", "delete", "backlog")
	require.Error(t, err)
	require.True(t, client.IsForbidden(err) || strings.Contains(err.Error(), "queue.manage"), "%v", err)

	require.Contains(t, d.run(t, "alerts", "delete", "backlog"), "alert rule backlog deleted")
	_, err = d.as(t, d.ownerFile, "alerts", "get", "backlog")
	require.True(t, client.IsNotFound(err), "%v", err)
}

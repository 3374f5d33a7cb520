package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
	"github.com/jobbie/jobbie/wire"
)

// `jobbie audit` against jobbie dev: a page as a table, JSON and YAML
// with the filters applied; --export follows the cursors of one-record
// pages to every record; --newest reads them the other way round; a viewer is refused; bad flags are refused
// before any request (the URL leads nowhere).
func TestAuditCommandAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t)
	for _, q := range []string{"a1", "a2", "a3"} {
		d.run(t, "pause", q)
	}
	filter := []string{"--action", "queue.manage", "--object", "queue", "--since", "1h"}

	var page wire.AuditPage
	deadline := time.Now().Add(30 * time.Second)
	for len(page.Records) < 3 {
		require.True(t, time.Now().Before(deadline), "three pause records: %+v", page)
		require.NoError(t, json.Unmarshal([]byte(d.run(t, append([]string{"audit", "-o", "json"}, filter...)...)), &page))
		time.Sleep(50 * time.Millisecond)
	}
	require.Len(t, page.Records, 3)
	for i, q := range []string{"a1", "a2", "a3"} {
		r := page.Records[i]
		require.Equal(t, q, r.ObjectID)
		require.Equal(t, "queue.manage", r.Action)
		require.Equal(t, "ok", r.Result)
	}

	lines := clitest.TableLines(d.run(t, append([]string{"audit", "--limit", "1"}, filter...)...))
	require.Equal(t, []string{"TIME", "KEY", "ACTION", "OBJECT", "NAMESPACE", "RESULT", "STATUS"}, lines[0])
	require.Len(t, lines, 3, "a header, one record, the cursor: %v", lines)
	require.Equal(t, []string{"queue.manage", "queue/a1", "default", "ok", "200"}, lines[1][2:])
	require.Equal(t, "more:", lines[2][0])
	next := clitest.TableLines(d.run(t, append([]string{"audit", "--limit", "1", "--cursor", lines[2][2]}, filter...)...))
	require.Equal(t, "queue/a2", next[1][3])

	require.Contains(t, d.run(t, append([]string{"audit", "-o", "yaml"}, filter...)...), "object_id: a3")
	none := d.run(t, "audit", "--object", "queue/a2", "--result", "forbidden", "-o", "json")
	require.NoError(t, json.Unmarshal([]byte(none), &page))
	require.Empty(t, page.Records)

	var exported []string
	sc := bufio.NewScanner(strings.NewReader(d.run(t, append([]string{"audit", "--export", "--limit", "1"}, filter...)...)))
	for sc.Scan() {
		var r wire.AuditRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), sc.Text())
		exported = append(exported, r.ObjectID)
	}
	require.Equal(t, []string{"a1", "a2", "a3"}, exported, "every page, oldest first")

	// --newest: the same records the other way round, a page at a time.
	lines = clitest.TableLines(d.run(t, append([]string{"audit", "--newest", "--limit", "1"}, filter...)...))
	require.Equal(t, "queue/a3", lines[1][3], "%v", lines)
	require.Equal(t, "more:", lines[2][0])
	next = clitest.TableLines(d.run(t, append([]string{"audit", "--newest", "--limit", "1", "--cursor", lines[2][2]}, filter...)...))
	require.Equal(t, "queue/a2", next[1][3])
	exported = nil
	sc = bufio.NewScanner(strings.NewReader(d.run(t, append([]string{"audit", "--newest", "--export", "--limit", "2"}, filter...)...)))
	for sc.Scan() {
		var r wire.AuditRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), sc.Text())
		exported = append(exported, r.ObjectID)
	}
	require.Equal(t, []string{"a3", "a2", "a1"}, exported, "every page, newest first")

	viewer := d.keyFile(t, "v", "viewer")
	_, err := d.as(t, viewer, "audit")
	require.Error(t, err)
	require.Contains(t, err.Error(), "audit.read")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--action", "queue.pause"}, "--action"},
		{[]string{"--object", "Queue 1"}, "--object"},
		{[]string{"--result", "Not Found"}, "--result"},
		{[]string{"--limit", "1001"}, "--limit"},
		{[]string{"--since", "yesterday"}, "since"},
		{[]string{"--from", "2026-11-02", "--to", "2026-11-01"}, "--to"},
		{[]string{"--from", "2026-11-02", "--since", "1h"}, "since"},
		{[]string{"--key-id", " "}, "--key-id"},
		{[]string{"--export", "-o", "json"}, "--export"},
		{[]string{"-o", "xml"}, "--output"},
	} {
		_, _, err := runJobbie(t, "", append([]string{"audit", "--url", "http://127.0.0.1:1", "--key", "k"}, tc.args...)...)
		require.Error(t, err, "%v", tc.args)
		require.Contains(t, err.Error(), tc.want, "%v", tc.args)
		require.NotContains(t, err.Error(), "connection refused", "%v: refused before any request", tc.args)
	}
}

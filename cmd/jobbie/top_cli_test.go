package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli"
)

// jobbie top: one frame with --once (as a table and as JSON), then the
// live view redrawn until q; bad flags send nothing.
func TestTopCommand(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t)
	ctx := context.Background()

	var hits atomic.Int32
	counter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(counter.Close)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"top", "--interval", "10ms"}, "--interval must be at least 500ms"},
		{[]string{"top", "-o", "json"}, "-o json prints one frame: add --once"},
		{[]string{"top", "--once", "-o", "csv"}, "--output must be"},
	} {
		_, err := d.as(t, d.ownerFile, append(tc.args, "--url", counter.URL)...)
		require.ErrorContains(t, err, tc.want, "%v", tc.args)
	}
	require.Zero(t, hits.Load())

	for range 3 {
		d.run(t, "enqueue", "top.a", "{}")
	}
	d.run(t, "enqueue", "top.b", "{}")
	job, err := d.owner.Fetch(ctx, client.FetchRequest{Queues: []string{"top.a"}, WorkerID: "w-top", Hostname: "box1", Timeout: time.Second})
	require.NoError(t, err)
	require.NotNil(t, job)

	out := d.run(t, "top", "--once")
	require.NotContains(t, out, "\x1b", "--once prints no escapes")
	require.Regexp(t, `(?m)^top\.a\s+active\s+2\s+0\s+1\s+0\s+0\s+-\s+0\.0\s+\S+$`, out)
	require.Regexp(t, `(?m)^top\.b\s+active\s+1\s+0\s+0\s+`, out)
	require.Regexp(t, `(?m)^w-top\s+box1\s+active\s+1\s+\S+ ago\s+top\.a$`, out)
	require.Contains(t, out, "2 queues, 3 waiting, 1 active; 1 worker (1 active)")
	require.Regexp(t, `leader \S+ \(healthy\)`, out)

	var f cli.TopFrame
	require.NoError(t, json.Unmarshal([]byte(d.run(t, "top", "--once", "-o", "json")), &f))
	require.Len(t, f.Queues, 2)
	require.Len(t, f.Workers, 1)
	require.True(t, f.Cluster.Healthy)

	// Live: frames until q; the second has a rate, the job acked between.
	inR, inW := io.Pipe()
	screen := &frames{changed: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetArgs([]string{"top", "--interval", "500ms", "--url", d.gateway, "--key-file", d.ownerFile})
		root.SetIn(inR)
		root.SetOut(screen)
		done <- root.ExecuteContext(ctx)
	}()
	frameCount := func() int { return strings.Count(string(screen.bytes()), "\x1b[H\x1b[2J") }
	waitFrames := func(n int) {
		t.Helper()
		deadline := time.After(60 * time.Second)
		for frameCount() < n {
			select {
			case <-screen.changed:
			case err := <-done:
				t.Fatalf("top ended: %v", err)
			case <-deadline:
				t.Fatalf("fewer than %d frames within 60 s", n)
			}
		}
	}
	waitFrames(1)
	require.NoError(t, d.owner.Ack(ctx, job.ID, nil))
	at := frameCount()
	waitFrames(at + 2) // a frame read wholly after the ack, and the one before it
	_, err = inW.Write([]byte("q"))
	require.NoError(t, err)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("top did not end on q")
	}
	inW.Close()
	s := string(screen.bytes())
	require.True(t, strings.HasPrefix(s, "\x1b[?1049h"), "the alternate screen")
	require.True(t, strings.HasSuffix(s, "\x1b[?25h\x1b[?1049l"), "the screen given back")
	last := s[strings.LastIndex(s, "\x1b[H\x1b[2J"):]
	require.Regexp(t, regexp.MustCompile(`(?m)^top\.a\s+active\s+2\s+0\s+0\s+0\s+0\s+\d+\.\d\s+`), strings.ReplaceAll(last, "\r", ""))
}

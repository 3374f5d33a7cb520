package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// jobbie events: the log's backlog filtered by queue, resumed after an
// id, and --follow through a connection that is cut, resuming after the
// last event printed: every event once. Bad flags send nothing.
func TestEventsCommand(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t)

	var hits atomic.Int32
	counter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(counter.Close)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--since-id", "abc"}, `--since-id "abc" is not an event id`},
		{[]string{"--since-id", ":5"}, `--since-id ":5" is not an event id`},
		{[]string{"--queue", "Bad Q"}, "--queue"},
		{[]string{"--limit", "-1"}, "--limit must not be negative"},
		{[]string{"--wait", "0s"}, "--wait must be positive"},
		{[]string{"--follow", "--wait", "1s"}, "--wait applies only without --follow"},
		{[]string{"-o", "xml"}, "--output must be"},
	} {
		_, err := d.as(t, d.ownerFile, append(append([]string{"events"}, tc.args...), "--url", counter.URL)...)
		require.ErrorContains(t, err, tc.want, "%v", tc.args)
	}
	require.Zero(t, hits.Load())

	parse := func(out string) (ls []eventJSON) {
		dec := json.NewDecoder(strings.NewReader(out))
		for dec.More() {
			var l eventJSON
			require.NoError(t, dec.Decode(&l), out)
			ls = append(ls, l)
		}
		return ls
	}
	enqueue := func(queue string) string {
		return strings.Fields(d.run(t, "enqueue", queue, "{}"))[0]
	}
	a1, _, a2 := enqueue("ev.a"), enqueue("ev.b"), enqueue("ev.a")

	// The backlog of one queue; --limit ends it as soon as both are in.
	ls := parse(d.run(t, "events", "--queue", "ev.a", "--limit", "2", "--wait", "60s", "-o", "json"))
	require.Len(t, ls, 2)
	require.Equal(t, []string{a1, a2}, []string{ls[0].JobID, ls[1].JobID})
	require.Equal(t, "enqueued", ls[0].Type)
	// Asked from the oldest event kept, the backlog marks no gap before
	// its first event (the log's ids do not start at 1).
	require.False(t, ls[0].Missed, "a backlog from the oldest event is not a gap")
	require.NotContains(t, d.run(t, "events", "--limit", "1", "--wait", "60s"), "missed")
	after := parse(d.run(t, "events", "--since-id", ls[0].ID, "--queue", "ev.a", "--limit", "1", "--wait", "60s", "-o", "json"))
	require.Equal(t, a2, after[0].JobID, "--since-id resumes after that event")
	table := d.run(t, "events", "--since-id", ls[0].ID, "--queue", "ev.a", "--limit", "1", "--wait", "60s")
	require.Regexp(t, `enqueued\s+pending\s+ev\.a\s+`+a2+`\s+attempt 0\s+\(`+ls[1].ID+`\)`, table)

	// --follow through a proxy whose connections are cut mid-stream.
	p := startCutProxy(t, strings.TrimPrefix(d.gateway, "http://"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &frames{changed: make(chan struct{}, 1)}
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetArgs([]string{"events", "--follow", "--since-id", ls[1].ID, "--queue", "ev.a", "-o", "json",
			"--url", "http://" + p.addr(), "--key-file", d.ownerFile})
		root.SetOut(out)
		root.SetErr(&stderr)
		done <- root.ExecuteContext(ctx)
	}()
	waitJob := func(id string) {
		t.Helper()
		deadline := time.After(60 * time.Second)
		for !strings.Contains(string(out.bytes()), id) {
			select {
			case <-out.changed:
			case err := <-done:
				t.Fatalf("events ended before %s: %v\n%s", id, err, stderr.String())
			case <-deadline:
				t.Fatalf("no event of %s within 60 s:\n%s\n%s", id, out.bytes(), stderr.String())
			}
		}
	}
	b1 := enqueue("ev.a")
	waitJob(b1)
	p.cut()
	b2 := enqueue("ev.a")
	waitJob(b2)
	cancel()
	require.NoError(t, <-done)
	got := parse(string(out.bytes()))
	var ids []string
	for _, l := range got {
		ids = append(ids, l.JobID)
	}
	require.Equal(t, []string{b1, b2}, ids, "every event once, in order")
	require.Contains(t, stderr.String(), "reconnecting")
	require.GreaterOrEqual(t, p.accepted.Load(), int32(2))
}

// eventJSON is what the test reads of `jobbie events -o json`'s lines.
type eventJSON struct {
	Missed bool   `json:"missed"`
	ID     string `json:"id"`
	Type   string `json:"type"`
	Queue  string `json:"queue"`
	JobID  string `json:"job_id"`
}

// cutProxy forwards TCP connections to a target until cut closes them.
type cutProxy struct {
	ln       net.Listener
	target   string
	mu       sync.Mutex
	conns    []net.Conn
	accepted atomic.Int32
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cutProxy{ln: ln, target: target}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); p.cut(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.accepted.Add(1)
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(up, c); up.Close() }()
			go func() { defer wg.Done(); io.Copy(c, up); c.Close() }()
		}
	}()
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

// cut closes every connection the proxy holds; new ones still go through.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// syncBuffer is a bytes.Buffer safe for a command writing while the test
// reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

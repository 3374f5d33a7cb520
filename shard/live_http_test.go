package shard

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// sseFrame is one Server-Sent Events frame: an event, or comment lines.
type sseFrame struct {
	ID, Event string
	Data      map[string]any
	Comment   string
}

type sseStream struct {
	t    *testing.T
	resp *http.Response
	rd   *bufio.Reader
	stop context.CancelFunc
}

// stream opens GET /api/v1/events; hdr are header name/value pairs.
func (b *bundle) stream(hdr ...string) *sseStream {
	b.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", b.url+"/api/v1/events", nil)
	require.NoError(b.t, err)
	b.setHeaders(req)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := b.client.Do(req)
	require.NoError(b.t, err)
	s := &sseStream{t: b.t, resp: resp, rd: bufio.NewReader(resp.Body), stop: cancel}
	b.t.Cleanup(s.close)
	return s
}

func (s *sseStream) close() { s.stop(); _ = s.resp.Body.Close() }

// next reads the next frame.
func (s *sseStream) next() sseFrame {
	s.t.Helper()
	var f sseFrame
	for {
		line, err := s.rd.ReadString('\n')
		require.NoError(s.t, err)
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			return f
		case strings.HasPrefix(line, ":"):
			f.Comment += strings.TrimSpace(line[1:])
		case strings.HasPrefix(line, "id: "):
			f.ID = line[4:]
		case strings.HasPrefix(line, "event: "):
			f.Event = line[7:]
		case strings.HasPrefix(line, "data: "):
			require.NoError(s.t, json.Unmarshal([]byte(line[6:]), &f.Data))
		}
	}
}

func seqOf(t *testing.T, f sseFrame) uint64 {
	t.Helper()
	_, seq, ok := strings.Cut(f.ID, ":")
	require.True(t, ok, "an event id names its shard: %q", f.ID)
	n, err := strconv.ParseUint(seq, 10, 64)
	require.NoError(t, err)
	return n
}

// nextEvent skips comments and returns the next event.
func (s *sseStream) nextEvent() sseFrame {
	s.t.Helper()
	for {
		if f := s.next(); f.Event != "" {
			return f
		}
	}
}

func TestEventsStreamLifecycleAndResume(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.stream()
	require.Equal(t, 200, s.resp.StatusCode)
	require.Equal(t, "text/event-stream", s.resp.Header.Get("Content-Type"))
	require.Equal(t, "jobbie events", s.next().Comment, "the stream opens at once")

	id := b.enqueue(map[string]any{"queue": "emails", "payload": map[string]any{}})
	require.Equal(t, 200, b.fetch([]string{"emails"}, nil).Status)
	require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+id, map[string]any{"worker_id": "w1"}).Status)

	var frames []sseFrame
	for _, want := range []string{"enqueued", "started", "completed"} {
		f := s.nextEvent()
		require.Equal(t, want, f.Event)
		require.Equal(t, want, f.Data["type"])
		require.Equal(t, id, f.Data["job_id"])
		require.Equal(t, "emails", f.Data["queue"])
		frames = append(frames, f)
	}
	require.Equal(t, "pending", frames[0].Data["state"])
	require.Nil(t, frames[0].Data["from"])
	require.Equal(t, "active", frames[1].Data["state"])
	require.Equal(t, "pending", frames[1].Data["from"])
	require.Equal(t, "w1", frames[1].Data["worker_id"])
	require.Equal(t, "completed", frames[2].Data["state"])
	require.Less(t, seqOf(t, frames[0]), seqOf(t, frames[1]))

	r := b.stream(wire.LastEventIDHeader, frames[0].ID)
	r.next() // the opening comment
	require.Equal(t, frames[1].ID, r.nextEvent().ID, "resumes after the id it was given")
	require.Equal(t, frames[2].ID, r.nextEvent().ID)
	r.close()

	// An id of another shard (a stream from before the namespace moved
	// here, its seq far past this log's): told it may have missed events,
	// then every event this node keeps, not silence until this log
	// catches up with the other's.
	moved := b.stream(wire.LastEventIDHeader, "s9:999999999")
	moved.next()
	require.Contains(t, moved.next().Comment, "events were missed")
	require.Equal(t, frames[0].ID, moved.nextEvent().ID)
	moved.close()

	// The log is replicated state: a restarted node still has it, and a
	// resume from before the restart misses nothing.
	s.close()
	require.NoError(t, b.srv.Stop())
	b = start(t, b.dir)
	old := b.stream(wire.LastEventIDHeader, frames[0].ID)
	require.Equal(t, "jobbie events", old.next().Comment)
	require.Equal(t, frames[1].ID, old.nextEvent().ID, "the log outlived the restart")
	require.Equal(t, frames[2].ID, old.nextEvent().ID)
	id2 := b.enqueue(map[string]any{"queue": "emails", "payload": map[string]any{}})
	f := old.nextEvent()
	require.Equal(t, id2, f.Data["job_id"])
	require.Less(t, seqOf(t, frames[2]), seqOf(t, f), "ids keep growing across the restart")
}

func TestEventsStreamIsPerNamespace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	other := "t_01hx0000000000000000000001/default"
	s := b.stream(wire.ShardNamespaceHeader, other)
	s.next()
	b.enqueue(map[string]any{"queue": "mine", "payload": 1})
	r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "theirs", "payload": 1}, wire.ShardNamespaceHeader, other)
	require.Equal(t, 201, r.Status)
	require.Equal(t, "theirs", s.nextEvent().Data["queue"], "the first event of this stream is its own namespace's")
}

func TestEventsStreamErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.call("GET", "/api/v1/events", nil, wire.LastEventIDHeader, "abc")
	require.Equal(t, 400, r.Status)
	require.Equal(t, wire.LastEventIDHeader, errField(r))
	r = b.call("GET", "/api/v1/events", nil, wire.ShardNamespaceHeader, "")
	require.Equal(t, 400, r.Status)
	r = b.as(pkitest.Metrics).call("GET", "/api/v1/events", nil)
	require.Equal(t, 403, r.Status, "a scraper reads metrics, not events")
}

func TestEventsStreamHeartbeatsAndEndsOnStop(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.events.SetHeartbeat(20 * time.Millisecond)
	s := b.stream()
	s.next()
	require.Equal(t, "heartbeat", s.next().Comment)
	require.NoError(t, b.srv.Stop())
	_, err := s.rd.ReadString('\n')
	for err == nil {
		_, err = s.rd.ReadString('\n')
	}
	require.Error(t, err, "the stream ends when the node stops")
}

func TestSlowStreamNeverBlocksApplies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// A client that opens a stream and never reads it.
	conn, err := tls.Dial("tcp", b.srv.Addr(), testCA(t).Creds(t, pkitest.Gateway).Client(nil))
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("GET /api/v1/events HTTP/1.1\r\nHost: x\r\n" + wire.ShardNamespaceHeader + ": " + testNS + "\r\n\r\n"))
	require.NoError(t, err)

	jobs := make([]map[string]any, 1000)
	for i := range jobs {
		jobs[i] = map[string]any{"queue": "bulk", "payload": strings.Repeat("x", 100)}
	}
	start := time.Now()
	for i := 0; i < 5; i++ { // 5,000 events: more than a ring, more than socket buffers
		r := b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": jobs})
		require.Equal(t, 201, r.Status)
	}
	require.Less(t, time.Since(start), 10*time.Second)

	s := b.stream(wire.LastEventIDHeader, "1")
	s.next()
	require.Contains(t, s.next().Comment, "events were missed")
}

func TestWorkersListedFromFetchAndHeartbeat(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.call("GET", "/api/v1/workers", nil)
	require.Equal(t, 200, r.Status)
	require.Equal(t, []any{}, r.Body["workers"])

	id := b.enqueue(map[string]any{"queue": "emails", "payload": 1})
	require.Equal(t, 200, b.fetch([]string{"emails", "sms"}, nil).Status)
	require.Equal(t, 200, b.call("POST", "/api/v1/heartbeat", map[string]any{"worker_id": "w1", "jobs": map[string]any{id: map[string]any{}}}).Status)

	r = b.call("GET", "/api/v1/workers", nil)
	require.Equal(t, 200, r.Status)
	ws := r.Body["workers"].([]any)
	require.Len(t, ws, 1)
	w := ws[0].(map[string]any)
	require.Equal(t, "w1", w["id"])
	require.Equal(t, "host1", w["hostname"])
	require.Equal(t, []any{"emails", "sms"}, w["queues"])
	require.Equal(t, float64(1), w["active_jobs"])
	require.Equal(t, []any{id}, w["active_job_ids"])
	require.Equal(t, "active", w["status"])
	seen, err := time.Parse(time.RFC3339Nano, w["last_seen"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), seen, 10*time.Second)

	require.Equal(t, 200, b.call("POST", "/api/v1/ack/"+id, map[string]any{"worker_id": "w1"}).Status)
	r = b.call("GET", "/api/v1/workers", nil)
	require.Equal(t, float64(0), r.Body["workers"].([]any)[0].(map[string]any)["active_jobs"])

	r = b.call("GET", "/api/v1/workers", nil, wire.ShardNamespaceHeader, "t_01hx0000000000000000000001/default")
	require.Equal(t, []any{}, r.Body["workers"], "another namespace sees none")
	r = b.call("GET", "/api/v1/workers", nil, wire.ShardNamespaceHeader, "")
	require.Equal(t, 400, r.Status)
}

// A stream opened while the shard's event log is still off (no sweep has
// run and nothing was enqueued) missed nothing when the log starts: its
// first frame after the opening is the first event, not a note that
// events were missed.
func TestEventsStreamOpenedBeforeTheLogStarts(t *testing.T) {
	t.Parallel()
	b := setup(t, withClock(clockwork.NewFakeClockAt(time.Now()))) // the leader's loops do not tick
	require.Zero(t, b.srv.events.Latest(testNS), "the log is off")
	s := b.stream()
	require.Equal(t, "jobbie events", s.next().Comment)
	id := b.enqueue(map[string]any{"queue": "q"})
	f := s.next()
	require.Empty(t, f.Comment)
	require.Equal(t, "enqueued", f.Event)
	require.Equal(t, id, f.Data["job_id"])
}

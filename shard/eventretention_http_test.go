package shard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// fillWith enqueues n jobs to queue in ns, 500 per batch, every request
// with hdr, and returns their ids in order.
func (b *bundle) fillWith(ns, queue string, n int, hdr ...string) []string {
	b.t.Helper()
	var ids []string
	for len(ids) < n {
		jobs := make([]map[string]any, min(n-len(ids), 500))
		for i := range jobs {
			jobs[i] = map[string]any{"queue": queue}
		}
		r := b.call("POST", "/api/v1/enqueue/batch", map[string]any{"jobs": jobs}, append([]string{wire.ShardNamespaceHeader, ns}, hdr...)...)
		require.Equal(b.t, 201, r.Status, string(r.Raw))
		for _, j := range r.Body["jobs"].([]any) {
			ids = append(ids, j.(map[string]any)["job_id"].(string))
		}
	}
	return ids
}

// oldestKept is the job of the oldest event ns's log keeps: a stream from
// before the log's start is told it missed events, then reads it. ""
// while the node refuses another stream (those closed go at their next
// heartbeat, which the tests that poll shorten).
func (b *bundle) oldestKept(ns string) string {
	b.t.Helper()
	s := b.stream(wire.ShardNamespaceHeader, ns, wire.LastEventIDHeader, "s1:0")
	defer s.close()
	if s.resp.StatusCode == 429 {
		return ""
	}
	require.Equal(b.t, "jobbie events", s.next().Comment)
	require.Contains(b.t, s.next().Comment, "events were missed")
	return s.nextEvent().Data["job_id"].(string)
}

// A namespace's event log keeps what its plan says, as the gateway's
// requests carry it: a plan of 1,000 events trims its namespace to them
// while a namespace on the default plan keeps all 1,500 of its own; a
// plan changed to 1,000 trims within a trim period of the namespace's
// next request, however small; the retention is replicated state, so a
// restarted node trims by it before any request says it again; a bad
// value is a 400 naming the header and changes nothing.
func TestEventLogRetentionFromThePlan(t *testing.T) {
	t.Parallel()
	opts := func(c *Config) { c.EventTrimInterval = 10 * time.Millisecond }
	b := setup(t, opts)
	b.srv.events.SetHeartbeat(20 * time.Millisecond)
	small := []string{wire.EventRetentionHeader, "24,1000"}
	standard := []string{wire.EventRetentionHeader, "24,100000"}
	a := b.fillWith(testNS, "ev", 1500, small...)
	o := b.fillWith(otherNS, "ev", 1500, standard...)

	eventually(t, 30*time.Second, func() bool { return b.oldestKept(testNS) == a[500] },
		"the namespace of the small plan keeps its 1,000 newest events")
	require.Equal(t, o[0], b.oldestKept(otherNS), "the namespace on the default plan keeps all 1,500")

	for _, bad := range []string{"24", "24,abc", "0,1000", "721,1000", "24,999", "24,10000001", "-1,1000"} {
		r := b.call("GET", "/api/v1/queues", nil, wire.ShardNamespaceHeader, otherNS, wire.EventRetentionHeader, bad)
		require.Equal(t, 400, r.Status, "%s: %s", bad, r.Raw)
		require.Contains(t, string(r.Raw), wire.EventRetentionHeader, bad)
	}
	// A bad value changed nothing: more events still do not trim the
	// default plan's namespace. The rounds are awaited through the small
	// plan's namespace, which sorts first: once it is trimmed twice after
	// them, a whole round has passed over the other.
	o = append(o, b.fillWith(otherNS, "ev", 10)...)
	for range 2 {
		a = append(a, b.fillWith(testNS, "ev", 10)...)
		eventually(t, 30*time.Second, func() bool { return b.oldestKept(testNS) == a[len(a)-1000] }, "trimmed again")
	}
	require.Equal(t, o[0], b.oldestKept(otherNS), "a bad header changed nothing")

	// The plan changes: the next request says so, and the next trim
	// keeps the new count.
	r := b.call("GET", "/api/v1/queues", nil, append([]string{wire.ShardNamespaceHeader, otherNS}, small...)...)
	require.Equal(t, 200, r.Status, string(r.Raw))
	eventually(t, 30*time.Second, func() bool { return b.oldestKept(otherNS) == o[len(o)-1000] },
		"the changed plan's retention")

	// A restarted node has heard no request yet: it trims by the record.
	require.NoError(t, b.srv.Stop())
	b = start(t, b.dir, opts)
	b.srv.events.SetHeartbeat(20 * time.Millisecond)
	a = append(a, b.fillWith(testNS, "ev", 20)...)
	eventually(t, 30*time.Second, func() bool { return b.oldestKept(testNS) == a[len(a)-1000] },
		"the recorded retention outlives the restart")
}

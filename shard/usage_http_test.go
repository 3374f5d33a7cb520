package shard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// usageHour is the hour the usage tests start in; their clock starts a
// minute into it.
var usageHour = time.Date(2026, 11, 24, 13, 0, 0, 0, time.UTC)

// usagePage reads one page of GET /internal/v1/usage as b's caller.
func (b *bundle) usagePage(since time.Time, cursor string, limit int) wire.UsagePage {
	b.t.Helper()
	q := url.Values{"since": {since.Format(time.RFC3339)}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if limit > 0 {
		q.Set("limit", fmt.Sprint(limit))
	}
	r := b.call("GET", "/internal/v1/usage?"+q.Encode(), nil)
	require.Equal(b.t, 200, r.Status, string(r.Raw))
	var p wire.UsagePage
	require.NoError(b.t, json.Unmarshal(r.Raw, &p))
	return p
}

// work runs one job of ns through enqueue, fetch and ack, taking d.
func (b *bundle) work(ns string, d time.Duration, clock *clockwork.FakeClock) {
	b.t.Helper()
	r := b.call("POST", "/api/v1/enqueue", map[string]any{"queue": "q"}, wire.ShardNamespaceHeader, ns)
	require.Equal(b.t, 201, r.Status, string(r.Raw))
	f := b.call("POST", "/api/v1/fetch", map[string]any{"queues": []string{"q"}, "worker_id": "w1", "timeout": 0}, wire.ShardNamespaceHeader, ns)
	require.Equal(b.t, 200, f.Status, string(f.Raw))
	clock.Advance(d)
	a := b.call("POST", "/api/v1/ack/"+f.Body["job_id"].(string), map[string]any{"worker_id": "w1"}, wire.ShardNamespaceHeader, ns)
	require.Equal(b.t, 200, a.Status, string(a.Raw))
}

// Control (and an operator) reads a shard's usage; every other caller is
// refused, and control may read nothing else.
func TestUsageEndpointAdmitsControlOnly(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(usageHour.Add(time.Minute))
	b := setup(t, withClock(clock))
	b.work(testNS, 1500*time.Millisecond, clock)

	ctl := b.as(pkitest.Control)
	p := ctl.usagePage(usageHour, "", 0)
	require.Equal(t, "s1", p.ShardID)
	require.Nil(t, p.Cursor)
	require.Len(t, p.Buckets, 1)
	got := p.Buckets[0]
	require.Equal(t, testNS, got.Namespace)
	require.True(t, usageHour.Equal(got.Hour), got.Hour)
	require.Positive(t, got.Meters.StorageByteMs)
	got.Meters.StorageByteMs = 0
	require.Equal(t, wire.ShardMeters{JobsEnqueued: 1, Executions: 1, JobsCompleted: 1, ActiveJobMs: 1500}, got.Meters)
	require.True(t, clock.Now().Equal(p.AppliedAt), "applied_at %s is the last change's clock", p.AppliedAt)
	require.Equal(t, p.Buckets, b.as(pkitest.Operator).usagePage(usageHour, "", 0).Buckets)

	path := "/internal/v1/usage?since=" + usageHour.Format(time.RFC3339)
	for _, id := range []pki.Identity{pkitest.Gateway, pkitest.Metrics, pkitest.Shard("s1", "n2")} {
		r := b.as(id).call("GET", path, nil)
		require.Equal(t, 403, r.Status, "%s: %s", id, r.Raw)
		require.Equal(t, "forbidden", errCode(r))
	}
	for _, route := range []struct{ method, path string }{
		{"GET", "/healthz"}, {"GET", "/readyz"}, {"GET", "/metrics"}, {"GET", "/internal/v1/status"},
		{"GET", "/internal/v1/members"}, {"POST", "/internal/v1/snapshot"}, {"GET", "/api/v1/queues"},
	} {
		r := ctl.call(route.method, route.path, nil)
		require.Equal(t, 403, r.Status, "control may not %s %s: %s", route.method, route.path, r.Raw)
	}
	require.Equal(t, 200, b.call("GET", "/healthz", nil).Status, "the others still may")
}

// Pages are in (hour, namespace) order, limit long, chained by cursors;
// since is truncated to its hour.
func TestUsageEndpointPages(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(usageHour.Add(time.Minute))
	b := setup(t, withClock(clock))
	var nss []string
	for i := range 5 {
		nss = append(nss, fmt.Sprintf("t_01hx0000000000000000000000/ns%d", i))
	}
	for _, ns := range []string{nss[3], nss[0], nss[4], nss[1], nss[2]} {
		b.work(ns, time.Millisecond, clock)
	}
	clock.Advance(time.Hour)
	b.work(nss[2], time.Millisecond, clock)

	ctl := b.as(pkitest.Control)
	type key struct {
		ns   string
		hour time.Time
	}
	var all, worked []key
	cursor, pages := "", 0
	for {
		p := ctl.usagePage(usageHour.Add(30*time.Minute), cursor, 2)
		pages++
		require.LessOrEqual(t, len(p.Buckets), 2)
		for _, bk := range p.Buckets {
			k := key{bk.Namespace, bk.Hour.UTC()}
			if n := len(all); n > 0 {
				prev := all[n-1]
				require.True(t, prev.hour.Before(k.hour) || prev.hour.Equal(k.hour) && prev.ns < k.ns, "%v after %v", k, prev)
			}
			all = append(all, k)
			if bk.Meters.JobsCompleted > 0 {
				worked = append(worked, k)
			}
		}
		if p.Cursor == nil {
			break
		}
		cursor = *p.Cursor
	}
	// The leader's sweep adds storage-only buckets of the second hour for
	// the namespaces whose records it integrated there.
	require.Equal(t, (len(all)+1)/2, pages)
	want := []key{{nss[0], usageHour}, {nss[1], usageHour}, {nss[2], usageHour}, {nss[3], usageHour}, {nss[4], usageHour},
		{nss[2], usageHour.Add(time.Hour)}}
	require.Equal(t, want, worked)

	second := ctl.usagePage(usageHour.Add(time.Hour), "", 0).Buckets
	require.Len(t, second, len(all)-5, "since the second hour")
	require.Empty(t, ctl.usagePage(usageHour.Add(2*time.Hour), "", 0).Buckets)
	require.Len(t, ctl.usagePage(usageHour, "", 5000).Buckets, len(all))
}

func TestUsageEndpointRefusesBadInput(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(usageHour.Add(time.Minute))
	b := setup(t, withClock(clock))
	ctl := b.as(pkitest.Control)
	since := "since=" + url.QueryEscape(usageHour.Format(time.RFC3339))
	for query, field := range map[string]string{
		"":                            "since",
		"since=":                      "since",
		"since=yesterday":             "since",
		"since=2026-11-24":            "since",
		"since=2026-10-15T12:00:00Z":  "since", // 40 days and an hour back
		since + "&limit=0":            "limit",
		since + "&limit=5001":         "limit",
		since + "&limit=ten":          "limit",
		since + "&cursor=%%%":         "cursor",
		since + "&cursor=AAAA":        "cursor",
		since + "&cursor=" + "x.y.z=": "cursor",
	} {
		r := ctl.call("GET", "/internal/v1/usage?"+query, nil)
		require.Equal(t, 400, r.Status, "%s: %s", query, r.Raw)
		require.Equal(t, field, errField(r), query)
	}
	p := ctl.usagePage(usageHour.Add(-40*24*time.Hour), "", 0)
	require.Empty(t, p.Buckets, "40 days back is still kept")
	require.NotNil(t, p.Buckets, "an empty list, not null")
}

// The counters are replicated state: a restarted node has them all.
func TestUsageSurvivesRestart(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(usageHour.Add(time.Minute))
	b := setup(t, withClock(clock))
	b.work(testNS, 2*time.Second, clock)
	b.work(testNS, time.Second, clock)
	before := b.as(pkitest.Control).usagePage(usageHour, "", 0)
	require.Len(t, before.Buckets, 1)
	require.NoError(t, b.srv.Stop())
	b2 := start(t, b.dir, withClock(clock))
	after := b2.as(pkitest.Control).usagePage(usageHour, "", 0)
	require.Equal(t, before.Buckets, after.Buckets)
	b2.work(testNS, time.Second, clock)
	m := b2.as(pkitest.Control).usagePage(usageHour, "", 0).Buckets[0].Meters
	require.Equal(t, [4]int64{3, 3, 3, 4000}, [4]int64{m.JobsEnqueued, m.Executions, m.JobsCompleted, m.ActiveJobMs})
}

// Any node answers from its own applied state: a follower that has
// applied as far as the leader answers the same counters.
func TestUsageIsTheSameOnFollowers(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 3)
	for range 3 {
		r := retry(t, g.nodes[1], "POST", "/api/v1/enqueue", map[string]any{"queue": "q"}) // forwarded to the leader
		created(t, r)
	}
	leader := g.nodes[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	since := time.Now().UTC().Add(-time.Hour)
	want := leader.as(pkitest.Control).usagePage(since, "", 0).Buckets
	require.NotEmpty(t, want)
	for _, f := range g.nodes[1:] {
		require.NoError(t, f.srv.repl.WaitApplied(ctx, leader.srv.repl.AppliedIndex()))
		got := f.as(pkitest.Control).usagePage(since, "", 0).Buckets
		var enq int64
		for _, bk := range got {
			enq += bk.Meters.JobsEnqueued
		}
		require.EqualValues(t, 3, enq)
		require.Equal(t, len(want), len(got))
		for i := range want {
			require.Equal(t, want[i].Namespace, got[i].Namespace)
			require.Equal(t, want[i].Meters.JobsEnqueued, got[i].Meters.JobsEnqueued)
		}
	}
}

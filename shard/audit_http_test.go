package shard

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// auditHeader is wire.AuditHeader as a gateway sends it for a request of
// key keyID.
func auditHeader(t *testing.T, keyID, action, route, objType, objID string, days int64) []string {
	raw, err := json.Marshal(wire.AuditContext{KeyID: keyID, Role: "admin", Action: action, Route: route, ObjectType: objType,
		ObjectID: objID, SourceAddress: "192.0.2.7", RequestID: "req-" + keyID, RetentionDays: days})
	require.NoError(t, err)
	return []string{wire.AuditHeader, string(raw)}
}

// auditPage reads ns's audit records through b.
func (b *bundle) auditPage(query string) wire.AuditPage {
	b.t.Helper()
	r := b.call("GET", "/api/v1/audit"+query, nil)
	require.Equal(b.t, 200, r.Status, string(r.Raw))
	var p wire.AuditPage
	require.NoError(b.t, json.Unmarshal(r.Raw, &p))
	return p
}

// Each request the gateway marks as audited leaves one record, done or
// refused, with the status and the result code; one without the header
// leaves none; the records are replicated, so after the leader is killed
// every remaining node answers them, and the new leader adds to them.
func TestAuditRecordsSurviveALeaderKill(t *testing.T) {
	t.Parallel()
	g := newShardGroup(t, 3)
	_, follower := g.leaderAndFollower()
	pause := auditHeader(t, "k1", "queue.manage", "POST /api/v1/queues/:name/pause", "queue", "q", 0)
	sendChecked(t, g.nodes, follower, "POST", "/api/v1/queues/q/pause", 200, func() bool { return len(follower.auditPage("").Records) == 1 }, pause...)
	sendChecked(t, g.nodes, follower, "POST", "/api/v1/jobs/nope/cancel", 404, func() bool { return len(follower.auditPage("").Records) == 2 },
		auditHeader(t, "k2", "job.manage", "POST /api/v1/jobs/:id/cancel", "job", "nope", 0)...)
	sendChecked(t, g.nodes, follower, "POST", "/api/v1/queues/q/resume", 200, func() bool { return !paused(t, follower, "q") }) // not audited: no header

	want := func(p wire.AuditPage) {
		require.Len(t, p.Records, 2)
		got := p.Records[0]
		require.Equal(t, []any{"k1", "queue.manage", "queue", "q", "ok", 200, "192.0.2.7", "req-k1", testNS},
			[]any{got.KeyID, got.Action, got.ObjectType, got.ObjectID, got.Result, got.Status, got.SourceAddress, got.RequestID, got.Namespace})
		got = p.Records[1]
		require.Equal(t, []any{"k2", "job", "nope", "not_found", 404}, []any{got.KeyID, got.ObjectType, got.ObjectID, got.Result, got.Status})
	}
	for _, n := range g.nodes {
		eventually(t, 10*time.Second, func() bool { return len(n.auditPage("").Records) == 2 }, "every member holds the records")
		want(n.auditPage(""))
	}
	require.Len(t, g.nodes[0].auditPage("?result=error").Records, 1)

	rest := g.killLeader()
	for _, n := range rest {
		want(n.auditPage(""))
	}
	sendChecked(t, rest, rest[0], "POST", "/api/v1/queues/q/pause", 200, func() bool { return paused(t, rest[0], "q") }) // not audited
	sendChecked(t, rest, rest[1], "POST", "/api/v1/queues/q/resume", 200, func() bool { return len(rest[1].auditPage("").Records) == 3 },
		auditHeader(t, "k3", "queue.manage", "POST /api/v1/queues/:name/resume", "queue", "q", 0)...)
	for _, n := range rest {
		eventually(t, 10*time.Second, func() bool { return len(n.auditPage("").Records) == 3 }, "the new leader's record")
	}
}

// sendChecked sends a write through b, one of nodes, as a careful caller
// would: again on a 503 no_leader (an election on a loaded machine:
// nothing was proposed), as retry does; after a 503 that may have been
// applied (the lead moved while it was replicated), once the group
// settled (b applied all a leader of the nodes had when it was ready: the
// write was then committed or dropped for good), again only if applied,
// which reads b's state, says it was not. Else it requires status.
func sendChecked(t *testing.T, nodes []*bundle, b *bundle, method, path string, status int, applied func() bool, hdr ...string) {
	t.Helper()
	eventually(t, 30*time.Second, func() bool {
		r := retry(t, b, method, path, nil, hdr...)
		if r.Status != 503 {
			require.Equal(t, status, r.Status, string(r.Raw))
			return true
		}
		var top uint64
		eventually(t, 20*time.Second, func() bool {
			for _, n := range nodes {
				if n.srv.repl.IsLeader() {
					top = n.srv.repl.AppliedIndex()
					return true
				}
			}
			return false
		}, "a ready leader")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		require.NoError(t, b.srv.repl.WaitApplied(ctx, top))
		return applied()
	}, method+" "+path+" answered or applied")
}

// paused reads whether b's node holds queue q paused.
func paused(t *testing.T, b *bundle, q string) bool {
	t.Helper()
	r := retry(t, b, "GET", "/api/v1/queues/"+q, nil)
	return r.Status == 200 && r.Body["paused"] == true
}

// The leader trims a namespace's records older than its plan's
// audit_retention_days (the days its gateway last sent), and keeps the
// newer; a bad header is a 400 that records nothing; the filters and
// the cursor page through what is kept.
func TestAuditRetentionTrim(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(time.Now())
	b := setup(t, withClock(clock), func(c *Config) { c.EventTrimInterval = time.Second })
	for _, q := range []string{"a", "b", "c"} {
		r := b.call("POST", "/api/v1/queues/"+q+"/pause", nil, auditHeader(t, "k1", "queue.manage", "POST /api/v1/queues/:name/pause", "queue", q, 2)...)
		require.Equal(t, 200, r.Status, string(r.Raw))
	}
	r := b.call("POST", "/api/v1/queues/a/resume", nil, wire.AuditHeader, "{not json")
	require.Equal(t, 400, r.Status, string(r.Raw))
	clock.Advance(36 * time.Hour)
	r = b.call("POST", "/api/v1/queues/d/pause", nil, auditHeader(t, "k2", "queue.manage", "POST /api/v1/queues/:name/pause", "queue", "d", 2)...)
	require.Equal(t, 200, r.Status, string(r.Raw))

	p := b.auditPage("?limit=2")
	require.Len(t, p.Records, 2)
	require.NotEmpty(t, p.Cursor)
	p2 := b.auditPage("?limit=2&after=" + p.Cursor)
	require.Equal(t, []string{"c", "d"}, []string{p2.Records[0].ObjectID, p2.Records[1].ObjectID})
	require.Equal(t, "d", b.auditPage("?key_id=k2").Records[0].ObjectID)
	require.Len(t, b.auditPage("?object=queue/b").Records, 1)
	require.Equal(t, 400, b.call("GET", "/api/v1/audit?from=yesterday", nil).Status)

	eventually(t, 20*time.Second, func() bool {
		clock.Advance(time.Hour) // past two days for the first three, not for d
		return len(b.auditPage("").Records) == 1
	}, "the leader trims the records past two days")
	require.Equal(t, "d", b.auditPage("").Records[0].ObjectID)
}

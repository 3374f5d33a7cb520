package gateway

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// auditedBy is the audit contexts the fake shard was sent, of the
// requests it saw from from on.
func (fs *fakeShard) auditedFrom(t *testing.T, from int) []wire.AuditContext {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var out []wire.AuditContext
	for _, r := range fs.seen[from:] {
		if h := r.Header.Get(wire.AuditHeader); h != "" {
			var ac wire.AuditContext
			require.NoError(t, json.Unmarshal([]byte(h), &ac))
			out = append(out, ac)
		}
	}
	return out
}

// Every mutating route of the route table but the worker protocol and
// enqueue leaves exactly one audit record with its action: a shard's
// route is sent to the shard with the record's context (the shard
// records it), a route control serves is recorded at control, a request
// the gateway refuses (a viewer's, 403) is recorded at control too, and
// no record ever holds a key's token. Routes not audited leave nothing.
func TestEveryMutatingRouteIsAuditedOnce(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	b := setup(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	owner := b.key(t, tenancy.RoleOwner, "default", tenancy.AllNamespaces)
	viewer := b.key(t, tenancy.RoleViewer, "default")
	var audited, exempt int
	var tokens []string
	for _, rt := range routeTable {
		what := rt.method + " " + rt.path
		path := fillParams(rt.path)
		var body any
		if rt.method != get && rt.method != del {
			body = map[string]any{}
		}
		if rt.method == post && rt.path == "/api/v1/keys" { // a valid one: its answer holds a token
			body = map[string]any{"name": "ci", "role": "producer", "namespaces": []string{"default"}}
		}
		if rt.method == get || rt.checks&longPollCap != 0 || rt.checks&public != 0 {
			continue // reads (a long-poll and a stream among them) are not audited
		}
		shardFrom, ctrlFrom := b.shard.count(), len(b.control.AuditOf(tenantA))
		r := b.do(t, rt.method, path, owner, body)
		if rt.path == "/api/v1/keys" && r.status == http.StatusCreated {
			var k wire.CreatedKey
			r.decode(t, &k)
			tokens = append(tokens, k.Token)
		}
		sent, recs := b.shard.auditedFrom(t, shardFrom), b.control.AuditOf(tenantA)[ctrlFrom:]
		if !auditedRoute(rt) {
			exempt++
			require.Empty(t, sent, "%s is not audited", what)
			require.Empty(t, recs, "%s is not audited", what)
			continue
		}
		audited++
		if rt.checks&local != 0 {
			require.Len(t, sent, 1, "%s: one record, by the shard", what)
			require.Empty(t, recs, "%s: the shard records it, not control", what)
			require.Equal(t, []string{string(rt.action), what, "key_owner", "owner", "default"},
				[]string{sent[0].Action, sent[0].Route, sent[0].KeyID, sent[0].Role, b.shard.last(t).Header.Get(wire.ShardNamespaceHeader)[len(tenantA)+1:]}, what)
		} else {
			require.Empty(t, sent, "%s: control serves it", what)
			require.Len(t, recs, 1, "%s: one record, at control (answered %d)", what, r.status)
			require.Equal(t, []any{string(rt.action), what, r.status, "owner"}, []any{recs[0].Action, recs[0].Route, recs[0].Status, recs[0].Role}, what)
			require.Equal(t, wire.AuditResult(r.status, r.body), recs[0].Result, what)
		}

		// A viewer may do none of it: the gateway refuses and records.
		if rt.action != tenancy.ActJobRead {
			shardFrom, ctrlFrom = b.shard.count(), len(b.control.AuditOf(tenantA))
			b.do(t, rt.method, path, viewer, body).requireError(t, http.StatusForbidden, apierr.Forbidden)
			require.Equal(t, shardFrom, b.shard.count(), "%s: refused before the shard", what)
			recs = b.control.AuditOf(tenantA)[ctrlFrom:]
			require.Len(t, recs, 1, "%s: the refusal's record", what)
			require.Equal(t, []any{string(rt.action), "forbidden", 403, "viewer"}, []any{recs[0].Action, recs[0].Result, recs[0].Status, recs[0].Role}, what)
		}
	}
	require.Greater(t, audited, 40, "the walk met the audited routes")
	// The worker protocol's and enqueue's routes (less the fetches, long-polls
	// skipped above), and the two POSTs that only read (search, preview).
	require.Equal(t, len(auditUnrecorded)-2+2, exempt)

	require.NotEmpty(t, tokens, "a key was created")
	raw, err := json.Marshal(b.control.AuditOf(tenantA))
	require.NoError(t, err)
	require.NotEmpty(t, logs.String(), "the gateway logged during the walk")
	for _, tok := range append(tokens, owner, viewer) {
		require.False(t, bytes.Contains(raw, []byte(tok)), "a key's token in the audit log")
		require.NotContains(t, logs.String(), tok, "a key's token in the gateway's log")
	}
	require.Empty(t, b.control.AuditOf(tenantB), "another tenant's log is untouched")
}

// GET /api/v1/audit merges the namespace's shard's records with the
// tenant's at control by time, under one cursor that resumes both; a
// namespace the tenant does not have is 404 (another tenant's of that
// name is never read); a bad cursor or filter is a 400 naming it;
// audit.read is the owner's and admin's alone; jsonl answers one record
// a line.
func TestAuditReadMergesShardAndControl(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.control.AddNamespace(tenantB, "private", "s1", b.shard.addr())
	owner := b.key(t, tenancy.RoleOwner, "default", tenancy.AllNamespaces)
	at := func(s int) time.Time { return time.Unix(1_800_000_000+int64(s), 0).UTC() }
	shardRecs := []wire.AuditRecord{
		{ID: "n:1.1.0", Time: at(1), KeyID: "key_owner", Action: "queue.manage", Namespace: "default"},
		{ID: "n:3.3.0", Time: at(3), KeyID: "key_owner", Action: "job.manage", Namespace: "default"},
	}
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/api/v1/audit", r.URL.Path)
		var out wire.AuditPage
		after := r.URL.Query().Get("after")
		for _, rec := range shardRecs {
			if after == "" || rec.ID > "n:"+after {
				out.Records = append(out.Records, rec)
			}
		}
		writeJSON(w, http.StatusOK, out)
	})
	// Control's records: two requests it serves, timed between the shard's.
	for range 2 {
		b.do(t, http.MethodPost, "/api/v1/roles", owner, map[string]any{})
	}
	ctrl := b.control.AuditOf(tenantA)
	require.Len(t, ctrl, 2)
	// Read one at a time: four records, in time order, across both logs.
	var got []string
	cursor := ""
	for range 10 {
		r := b.do(t, http.MethodGet, "/api/v1/audit?limit=1&cursor="+cursor, owner, nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		var p wire.AuditPage
		r.decode(t, &p)
		for _, rec := range p.Records {
			got = append(got, rec.ID)
		}
		if cursor = p.Cursor; cursor == "" {
			break
		}
	}
	all := []wire.AuditRecord{shardRecs[0], shardRecs[1], ctrl[0], ctrl[1]}
	want := make([]string, 0, 4)
	for _, r := range sortedByTime(all) {
		want = append(want, r.ID)
	}
	require.Equal(t, want, got)

	r := b.do(t, http.MethodGet, "/api/v1/audit?format=jsonl", owner, nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	require.Equal(t, "application/x-ndjson", r.header.Get("Content-Type"))
	require.Len(t, strings.Split(strings.TrimSpace(string(r.body)), "\n"), 4)

	b.do(t, http.MethodGet, "/api/v1/audit?namespace=private", owner, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	require.Equal(t, "cursor", b.do(t, http.MethodGet, "/api/v1/audit?cursor=nope", owner, nil).requireError(t, 400, apierr.BadRequest).Field)
	require.Equal(t, "from", b.do(t, http.MethodGet, "/api/v1/audit?from=today", owner, nil).requireError(t, 400, apierr.BadRequest).Field)
	require.Equal(t, "format", b.do(t, http.MethodGet, "/api/v1/audit?format=xml", owner, nil).requireError(t, 400, apierr.BadRequest).Field)
	for _, role := range []tenancy.Role{tenancy.RoleDeveloper, tenancy.RoleViewer, tenancy.RoleBilling} {
		b.do(t, http.MethodGet, "/api/v1/audit", b.key(t, role, "default"), nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	}
	// An admin of "default" alone reads that namespace's records, not the
	// tenant's own (the roles' records) nor another namespace's.
	b.do(t, http.MethodPut, "/api/v1/namespaces/emails/egress", owner, map[string]any{}) // a record of "emails" at control
	r = b.do(t, http.MethodGet, "/api/v1/audit", b.key(t, tenancy.RoleAdmin, "default"), nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	var scoped wire.AuditPage
	r.decode(t, &scoped)
	require.Equal(t, []string{"n:1.1.0", "n:3.3.0"}, []string{scoped.Records[0].ID, scoped.Records[1].ID})
	require.Len(t, scoped.Records, 2, "only the namespace's own records")
	r = b.do(t, http.MethodGet, "/api/v1/audit?action=namespace.manage", owner, nil)
	require.Contains(t, string(r.body), `"namespace":"emails"`, "a key of every namespace reads them all")
}

func sortedByTime(recs []wire.AuditRecord) []wire.AuditRecord {
	out := append([]wire.AuditRecord(nil), recs...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].Time.Before(out[i].Time) {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

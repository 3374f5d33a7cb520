package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// call sends one request to dev's gateway with key and answers the status
// and the body.
func (d *devServer) call(t *testing.T, key, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, d.gateway+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, out
}

// The audit log against jobbie dev (real control, shard and gateway): a
// queue paused (the shard's record), a key and a webhook created and a
// namespace made (control's and the shard's), a viewer's refused delete
// (the gateway's, at control) each leave one record with who, what and
// how it ended, the key's name included, merged in one log; neither the
// key's token nor the webhook's secret is in it; another tenant sees none
// of it, and the first tenant's namespace is 404 to it.
func TestAuditLogAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir(), "--push-allow-private") // the webhook's loopback address
	var acme, beta wire.CreatedTenant
	require.NoError(t, json.Unmarshal([]byte(d.operator(t, "", "tenants", "create", "acme", "-o", "json")), &acme))
	require.NoError(t, json.Unmarshal([]byte(d.operator(t, "", "tenants", "create", "beta", "-o", "json")), &beta))
	owner := acme.OwnerKey

	st, _ := d.call(t, owner, "POST", "/api/v1/queues/mail/pause", nil)
	require.Equal(t, 200, st)
	st, raw := d.call(t, owner, "POST", "/api/v1/keys", map[string]any{"name": "dash", "role": "viewer", "namespaces": []string{"*"}})
	require.Equal(t, 201, st, string(raw))
	var viewer wire.CreatedKey
	require.NoError(t, json.Unmarshal(raw, &viewer))
	st, raw = d.call(t, owner, "POST", "/api/v1/webhooks", map[string]any{"url": "https://127.0.0.1:9443/in", "events": []string{"*"}, "secret": true})
	require.Equal(t, 201, st, string(raw))
	var hook wire.Webhook
	require.NoError(t, json.Unmarshal(raw, &hook))
	require.NotEmpty(t, hook.Secret)
	st, raw = d.call(t, owner, "POST", "/api/v1/namespaces", map[string]any{"name": "ledger"})
	require.Equal(t, 201, st, string(raw))
	st, _ = d.call(t, viewer.Token, "DELETE", "/api/v1/queues/mail", nil)
	require.Equal(t, 403, st)

	st, raw = d.call(t, owner, "GET", "/api/v1/audit", nil)
	require.Equal(t, 200, st, string(raw))
	var page wire.AuditPage
	require.NoError(t, json.Unmarshal(raw, &page))
	byRoute := map[string]wire.AuditRecord{}
	for _, r := range page.Records {
		_, dup := byRoute[r.Route]
		require.False(t, dup, "one record per request: %s", r.Route)
		byRoute[r.Route] = r
	}
	pause := byRoute["POST /api/v1/queues/:name/pause"]
	require.Equal(t, []any{"queue.manage", "queue", "mail", "default", "ok", 200, "owner", "owner"},
		[]any{pause.Action, pause.ObjectType, pause.ObjectID, pause.Namespace, pause.Result, pause.Status, pause.KeyName, pause.Role})
	require.NotEmpty(t, pause.SourceAddress)
	require.NotEmpty(t, pause.RequestID)
	require.Equal(t, []any{"key.manage", 201, viewer.ID}, []any{byRoute["POST /api/v1/keys"].Action, byRoute["POST /api/v1/keys"].Status, byRoute["POST /api/v1/keys"].ObjectID})
	require.Equal(t, []any{"webhook.manage", hook.ID}, []any{byRoute["POST /api/v1/webhooks"].Action, byRoute["POST /api/v1/webhooks"].ObjectID})
	require.Equal(t, []any{"namespace.manage", "ledger"}, []any{byRoute["POST /api/v1/namespaces"].Action, byRoute["POST /api/v1/namespaces"].ObjectID})
	refused := byRoute["DELETE /api/v1/queues/:name"]
	require.Equal(t, []any{"forbidden", 403, "dash", "viewer"}, []any{refused.Result, refused.Status, refused.KeyName, refused.Role})
	for i := 1; i < len(page.Records); i++ {
		require.False(t, page.Records[i].Time.Before(page.Records[i-1].Time), "oldest first")
	}

	st, lines := d.call(t, owner, "GET", "/api/v1/audit?format=jsonl&result=error", nil)
	require.Equal(t, 200, st)
	require.Len(t, strings.Split(strings.TrimSpace(string(lines)), "\n"), 1, "the one refusal")
	for _, secret := range []string{viewer.Token, hook.Secret, owner} {
		require.NotContains(t, string(raw), secret)
		require.NotContains(t, string(lines), secret)
	}

	st, raw = d.call(t, beta.OwnerKey, "GET", "/api/v1/audit", nil)
	require.Equal(t, 200, st, string(raw))
	require.NotContains(t, string(raw), "queues/:name/pause", "another tenant's records are never shown")
	st, _ = d.call(t, beta.OwnerKey, "GET", "/api/v1/audit?namespace=ledger", nil)
	require.Equal(t, 404, st, "another tenant's namespace")
}

// auditWalk reads every page of GET /api/v1/audit with query q (limit
// per page) and answers the records' ids in the order read.
func auditWalk(t *testing.T, d *devServer, key, q string) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for range 1000 {
		path := "/api/v1/audit?" + q
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		st, raw := d.call(t, key, "GET", path, nil)
		require.Equal(t, 200, st, string(raw))
		var p wire.AuditPage
		require.NoError(t, json.Unmarshal(raw, &p))
		for _, r := range p.Records {
			ids = append(ids, r.ID)
		}
		if cursor = p.Cursor; cursor == "" {
			return ids
		}
	}
	t.Fatal("the pages never end")
	return nil
}

// order=desc against jobbie dev: the shard's records (queue pauses and
// resumes) and control's (roles, keys) interleaved, read newest first a
// few at a time across both logs, are exactly the oldest-first walk
// reversed, also within a time range and through a filter; a cursor of
// one order is refused by the other, and a bad order is a 400 naming it.
func TestAuditNewestFirstAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevIn(t, t.TempDir())
	var acme wire.CreatedTenant
	require.NoError(t, json.Unmarshal([]byte(d.operator(t, "", "tenants", "create", "acme", "-o", "json")), &acme))
	owner := acme.OwnerKey
	for i := range 6 {
		st, raw := d.call(t, owner, "POST", "/api/v1/queues/mail/pause", nil)
		require.Equal(t, 200, st, string(raw))
		st, raw = d.call(t, owner, "POST", "/api/v1/roles", map[string]any{"name": "r" + strconv.Itoa(i), "permissions": []map[string]any{{"action": "queue.read", "resource": "ns/*"}}})
		require.Less(t, st, 500, string(raw))
		st, raw = d.call(t, owner, "POST", "/api/v1/queues/mail/resume", nil)
		require.Equal(t, 200, st, string(raw))
	}

	oldest := auditWalk(t, d, owner, "limit=4")
	require.Len(t, oldest, 18, "one record a request")
	newest := auditWalk(t, d, owner, "limit=4&order=desc")
	require.Equal(t, reversed(oldest), newest)
	require.Equal(t, newest, auditWalk(t, d, owner, "limit=1&order=desc"))
	require.Equal(t, newest, auditWalk(t, d, owner, "order=desc"), "one page")

	q := "action=queue.manage&limit=3"
	require.Equal(t, reversed(auditWalk(t, d, owner, q)), auditWalk(t, d, owner, q+"&order=desc"))
	st, raw := d.call(t, owner, "GET", "/api/v1/audit?order=desc&limit=5", nil)
	require.Equal(t, 200, st, string(raw))
	var page wire.AuditPage
	require.NoError(t, json.Unmarshal(raw, &page))
	mid := page.Records[2].Time
	from := url.QueryEscape(mid.Format(time.RFC3339Nano))
	within := auditWalk(t, d, owner, "limit=2&order=desc&from="+from)
	require.Equal(t, reversed(auditWalk(t, d, owner, "limit=2&from="+from)), within)
	require.GreaterOrEqual(t, len(within), 3)

	st, raw = d.call(t, owner, "GET", "/api/v1/audit?order=sideways", nil)
	require.Equal(t, 400, st)
	require.Contains(t, string(raw), `"field":"order"`)
	st, raw = d.call(t, owner, "GET", "/api/v1/audit?order=asc&cursor="+page.Cursor, nil)
	require.Equal(t, 400, st, "a newest-first cursor read oldest first")
	require.Contains(t, string(raw), `"field":"cursor"`)
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

package control

import (
	"net/http"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// The gateways' audit endpoints: a record appended for a tenant is read
// back with its time and the key's name, by its own tenant only (an
// unknown tenant is 404, another tenant reads nothing of it), a bad one
// is a 400 naming the field, a shard's certificate is refused; the
// leader trims records past the retention they were sent with.
func TestHTTPAuditAppendReadTrim(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	b := setup(t, func(c *Config) { c.Clock, c.AuditTrimInterval = clk, 10*time.Millisecond })
	gw := b.as(t, pkitest.Gateway)
	acme := b.newTenant(t, "acme")
	beta := b.newTenant(t, "beta")
	base := "/internal/v1/tenants/" + acme.Tenant.ID + "/audit"
	keys := decodeAs[wire.KeyList](t, gw.do(t, http.MethodGet, "/internal/v1/tenants/"+acme.Tenant.ID+"/keys", "", nil))
	require.Len(t, keys.Keys, 1)
	rec := wire.AuditRecord{KeyID: keys.Keys[0].ID, Role: "owner", Action: "key.manage", Route: "POST /api/v1/keys",
		ObjectType: "key", ObjectID: "key_x", Result: "ok", Status: 201, SourceAddress: "192.0.2.1", RequestID: "req_1"}
	r := gw.do(t, http.MethodPost, base, "", wire.AuditAppendRequest{Record: rec, RetentionDays: 1})
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)

	page := decodeAs[wire.AuditPage](t, gw.do(t, http.MethodGet, base, "", nil))
	require.Len(t, page.Records, 1)
	got := page.Records[0]
	require.Equal(t, []any{"owner", "key_x", clk.Now().UTC()}, []any{got.KeyName, got.ObjectID, got.Time.UTC()})
	require.Empty(t, decodeAs[wire.AuditPage](t, gw.do(t, http.MethodGet, "/internal/v1/tenants/"+beta.Tenant.ID+"/audit", "", nil)).Records)
	requireError(t, gw.do(t, http.MethodGet, "/internal/v1/tenants/t_01hzzzzzzzzzzzzzzzzzzzzzzq/audit", "", nil), 404, "not_found")
	requireError(t, gw.do(t, http.MethodPost, base, "", wire.AuditAppendRequest{Record: rec, RetentionDays: 4000}), 400, "bad_request", "retention_days")
	requireError(t, gw.do(t, http.MethodGet, base+"?limit=0", "", nil), 400, "bad_request", "limit")
	require.Equal(t, http.StatusForbidden, b.as(t, pkitest.Shard("s1", "n1")).do(t, http.MethodGet, base, "", nil).status)

	clk.Advance(25 * time.Hour)
	deadline := time.Now().Add(20 * time.Second)
	for len(decodeAs[wire.AuditPage](t, gw.do(t, http.MethodGet, base, "", nil)).Records) != 0 {
		require.True(t, time.Now().Before(deadline), "the leader never trimmed the day-old record")
		time.Sleep(50 * time.Millisecond)
	}
}

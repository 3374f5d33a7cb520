package control

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

const novemberFifth = "?from=2026-11-05T00:00:00Z&to=2026-11-06T00:00:00Z"

// The usage endpoints are the gateways': 401 without a certificate, 403
// with another role's.
func TestHTTPUsageIsTheGatewaysAlone(t *testing.T) {
	t.Parallel()
	b := setup(t, noPulls)
	tid := b.newTenant(t, "acme").Tenant.ID
	endpoints := []struct{ method, path string }{
		{http.MethodGet, "/internal/v1/tenants/" + tid + "/usage"},
		{http.MethodPost, "/internal/v1/usage/api-requests"},
	}
	body := wire.APIRequestsReport{Gateway: "gw_1", Counts: []wire.APIRequestsCount{{TenantID: tid, Hour: hourOf(9), Count: 5}}}
	for _, e := range endpoints {
		for _, tok := range []string{"", b.op} {
			requireError(t, b.do(t, e.method, e.path, tok, body), 401, "unauthenticated")
		}
		for _, id := range []pki.Identity{pkitest.Operator, pkitest.Shard("s1", "n1"), pkitest.Metrics, pkitest.Control} {
			o := b.as(t, id)
			requireError(t, o.do(t, e.method, e.path, b.op, body), 403, "forbidden")
		}
	}
	require.Zero(t, usageOf(t, b.srv, tid, "").Totals.APIRequests, "no refused push was stored")
}

func TestHTTPUsage(t *testing.T) {
	t.Parallel()
	b := setup(t, noPulls)
	gw := b.as(t, pkitest.Gateway)
	acme, other := b.newTenant(t, "acme").Tenant.ID, b.newTenant(t, "other").Tenant.ID
	put(t, b.srv, "s1", hourOf(10), entry(acme, "default", hourOf(9), runs(4)), entry(other, "default", hourOf(9), runs(40)))
	push := wire.APIRequestsReport{Gateway: "gw_1", Counts: []wire.APIRequestsCount{{TenantID: acme, Hour: hourOf(9), Count: 5},
		{TenantID: other, Hour: hourOf(9), Count: 50}}}
	r := gw.do(t, http.MethodPost, "/internal/v1/usage/api-requests", "", push)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)

	r = gw.do(t, http.MethodGet, "/internal/v1/tenants/"+acme+"/usage"+novemberFifth, "", nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	u := decodeAs[wire.Usage](t, r)
	require.Equal(t, int64(4), u.Totals.Executions, "acme's only")
	require.Equal(t, int64(5), u.Totals.APIRequests)
	require.Len(t, u.Tenant, 24)
	raw := decodeAs[map[string]any](t, r)
	require.ElementsMatch(t, []string{"from", "to", "granularity", "namespaces", "tenant", "totals"}, keysOf(raw))

	r = gw.do(t, http.MethodGet, "/internal/v1/tenants/"+acme+"/usage"+novemberFifth+"&granularity=day&namespace=default", "", nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	u = decodeAs[wire.Usage](t, r)
	require.Equal(t, "day", u.Granularity)
	require.Equal(t, []string{"default"}, []string{u.Namespaces[0].Namespace})
	require.Zero(t, u.Totals.APIRequests)

	base := "/internal/v1/tenants/" + acme + "/usage"
	for q, field := range map[string]string{
		"?granularity=week": "granularity",
		"?from=monday":      "from",
		"?to=2026-11-05":    "to",
		"?from=2026-11-05T10:00:00Z&to=2026-11-05T09:00:00Z": "to",
		"?from=2026-01-01T00:00:00Z&to=2026-11-01T00:00:00Z": "from",
		"?namespace=Bad_Name":                                "namespace",
	} {
		requireError(t, gw.do(t, http.MethodGet, base+q, "", nil), 400, "bad_request", field)
	}
	requireError(t, gw.do(t, http.MethodGet, base+"?namespace=nope", "", nil), 404, "not_found")
	requireError(t, gw.do(t, http.MethodGet, "/internal/v1/tenants/"+unknownTID+"/usage", "", nil), 404, "not_found")

	badPush := []struct {
		body  any
		field string
	}{
		{wire.APIRequestsReport{Gateway: "", Counts: push.Counts}, "gateway"},
		{wire.APIRequestsReport{Gateway: "gw 1", Counts: push.Counts}, "gateway"},
		{wire.APIRequestsReport{Gateway: "gw_1", Counts: []wire.APIRequestsCount{{TenantID: "nope", Hour: hourOf(9)}}}, "counts[0].tenant_id"},
		{wire.APIRequestsReport{Gateway: "gw_1", Counts: []wire.APIRequestsCount{{TenantID: acme, Hour: hourOf(9).Add(1)}}}, "counts[0].hour"},
		{wire.APIRequestsReport{Gateway: "gw_1", Counts: []wire.APIRequestsCount{{TenantID: acme, Hour: hourOf(9), Count: -1}}}, "counts[0].count"},
		{wire.APIRequestsReport{Gateway: "gw_1", Counts: make([]wire.APIRequestsCount, wire.MaxAPIRequestCounts+1)}, "counts"},
	}
	for _, tc := range badPush {
		requireError(t, gw.do(t, http.MethodPost, "/internal/v1/usage/api-requests", "", tc.body), 400, "bad_request", tc.field)
	}
	requireError(t, gw.do(t, http.MethodPost, "/internal/v1/usage/api-requests", "", `{"gateway":"g","extra":1}`), 400, "bad_request", "extra")
	require.Equal(t, int64(5), usageOf(t, b.srv, acme, "").Totals.APIRequests, "no bad push changed anything")
}

package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// fakeControl answers the operator API from a table of "METHOD /path"
// (path with its query) to status and body, and records every request.
type fakeControl struct {
	srv     *httptest.Server
	mu      sync.Mutex
	calls   []string
	answers map[string]fakeAnswer
}

type fakeAnswer struct {
	status int
	body   string
}

func newFakeControl(t *testing.T, answers map[string]fakeAnswer) (*fakeControl, *client.Client) {
	t.Helper()
	f := &fakeControl{answers: answers}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		call := r.Method + " " + r.URL.RequestURI()
		f.mu.Lock()
		f.calls = append(f.calls, string(bytes.TrimSpace([]byte(call+" "+string(body)))))
		a, ok := f.answers[call]
		f.mu.Unlock()
		if !ok {
			a = fakeAnswer{http.StatusNotFound, `{"error":{"code":"not_found","message":"no route ` + call + `"}}`}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(f.srv.Close)
	c := client.New(f.srv.URL, "op-key")
	t.Cleanup(c.CloseIdleConnections)
	return f, c
}

func (f *fakeControl) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	return out
}

// The plan methods list, read and put plans; PutPlanJSON replaces a plan
// and creates it on the control plane's 404, sending the JSON as given.
func TestOperatorPlans(t *testing.T) {
	t.Parallel()
	pro := `{"name":"pro","currency":"EUR","prices":{},"included":{},"limits":{},"version":2,"updated_at":"2026-11-01T12:00:00Z","effective_from":"2026-11-01T13:00:00Z"}`
	f, c := newFakeControl(t, map[string]fakeAnswer{
		"GET /control/v1/plans":      {200, `{"plans":[` + pro + `]}`},
		"GET /control/v1/plans/pro":  {200, pro},
		"PUT /control/v1/plans/pro":  {200, pro},
		"POST /control/v1/plans":     {201, `{"name":"new","currency":"EUR","version":1}`},
		"GET /control/v1/plans/nope": {404, `{"error":{"code":"not_found","message":"no plan \"nope\""}}`},
		"PUT /control/v1/tenants/t_1/plan": {200, `{"tenant_id":"t_1","plan":{"name":"free","currency":"USD"},"since":"2026-11-01T12:00:00Z",
			"next":{"name":"pro","currency":"EUR"},"next_from":"2026-11-01T13:00:00Z"}`},
		"GET /control/v1/tenants/t_1/plan": {200, `{"tenant_id":"t_1","plan":{"name":"free","currency":"USD"},"since":"2026-11-01T12:00:00Z"}`},
	})
	ctx := context.Background()

	list, err := c.ListPlans(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "pro", list[0].Name)
	require.Equal(t, uint64(2), list[0].Version)
	require.Equal(t, time.Date(2026, 11, 1, 13, 0, 0, 0, time.UTC), list[0].EffectiveFrom)
	p, err := c.GetPlanByName(ctx, "pro")
	require.NoError(t, err)
	require.Equal(t, "EUR", p.Currency)
	_, err = c.GetPlanByName(ctx, "nope")
	require.True(t, client.IsNotFound(err), "%v", err)

	// A plan that exists is replaced; an unknown field goes as it is.
	raw := json.RawMessage(`{"name":"pro","currency":"EUR","colour":"red"}`)
	p, err = c.PutPlanJSON(ctx, "pro", raw)
	require.NoError(t, err)
	require.Equal(t, "pro", p.Name)
	// A new one is created on the PUT's 404.
	p, err = c.PutPlan(ctx, client.Plan{Name: "new", Currency: "EUR"})
	require.NoError(t, err)
	require.Equal(t, uint64(1), p.Version)

	tp, err := c.SetTenantPlan(ctx, "t_1", "pro")
	require.NoError(t, err)
	require.Equal(t, "pro", tp.Next.Name)
	tp, err = c.GetTenantPlan(ctx, "t_1")
	require.NoError(t, err)
	require.Equal(t, "free", tp.Plan.Name)
	require.Nil(t, tp.Next)

	require.Equal(t, []string{
		"GET /control/v1/plans",
		"GET /control/v1/plans/pro",
		"GET /control/v1/plans/nope",
		`PUT /control/v1/plans/pro {"name":"pro","currency":"EUR","colour":"red"}`,
		`PUT /control/v1/plans/new {"name":"new","currency":"EUR","limits":{}}`,
		`POST /control/v1/plans {"name":"new","currency":"EUR","limits":{}}`,
		`PUT /control/v1/tenants/t_1/plan {"plan":"pro"}`,
		"GET /control/v1/tenants/t_1/plan",
	}, f.requests())
}

// The invoice methods read a tenant's invoices on the control plane.
func TestOperatorTenantInvoices(t *testing.T) {
	t.Parallel()
	inv := `{"id":"inv_t_1_2026-10","tenant_id":"t_1","currency":"EUR","status":"closed","total":35}`
	f, c := newFakeControl(t, map[string]fakeAnswer{
		"GET /control/v1/tenants/t_1/invoices":                 {200, `{"invoices":[{"id":"inv_t_1_2026-10","status":"closed","total":35,"currency":"EUR"}]}`},
		"GET /control/v1/tenants/t_1/invoices/inv_t_1_2026-10": {200, inv},
		"GET /control/v1/tenants/t_1/invoices/upcoming":        {200, inv},
	})
	ctx := context.Background()
	list, err := c.ListTenantInvoices(ctx, "t_1")
	require.NoError(t, err)
	require.Equal(t, []client.InvoiceSummary{{ID: "inv_t_1_2026-10", Status: "closed", Total: 35, Currency: "EUR"}}, list)
	got, err := c.GetTenantInvoice(ctx, "t_1", "inv_t_1_2026-10")
	require.NoError(t, err)
	require.Equal(t, int64(35), got.Total)
	got, err = c.UpcomingTenantInvoice(ctx, "t_1")
	require.NoError(t, err)
	require.Equal(t, "t_1", got.TenantID)
	_, err = c.ListTenantInvoices(ctx, "t_2")
	require.True(t, client.IsNotFound(err), "%v", err)
	require.Len(t, f.requests(), 4)
}

// The shard list and the signing keys: what control answers, decoded;
// a rotation's retire_after as the API takes it.
func TestOperatorShardsAndSigningKeys(t *testing.T) {
	t.Parallel()
	keys := `{"signing_keys":[{"kid":"k1","created_at":"2026-11-01T12:00:00Z","current":true,"retired":false}]`
	f, c := newFakeControl(t, map[string]fakeAnswer{
		"GET /control/v1/shards": {200, `{"shards":[{"id":"s1","addr":"https://10.0.0.5:7101","namespaces":3,"capacity":100,"static":false,
			"members":[{"node_id":"n1","http_addr":"10.0.0.5:7101","raft_addr":"10.0.0.5:7201"}],"leader":{"node_id":"n1","http_addr":"10.0.0.5:7101","term":4}}]}`},
		"GET /control/v1/signing-keys":         {200, keys + `}`},
		"POST /control/v1/signing-keys/rotate": {200, keys + `,"operator_key":"op2"}`},
	})
	ctx := context.Background()
	shards, err := c.ListShardLoads(ctx)
	require.NoError(t, err)
	require.Equal(t, []client.ShardLoad{{ID: "s1", Addr: "https://10.0.0.5:7101", Namespaces: 3, Capacity: 100,
		Members: []wire.ShardMember{{NodeID: "n1", HTTPAddr: "10.0.0.5:7101", RaftAddr: "10.0.0.5:7201"}},
		Leader:  &wire.ShardLeader{NodeID: "n1", HTTPAddr: "10.0.0.5:7101", Term: 4}}}, shards)

	ks, err := c.ListSigningKeys(ctx)
	require.NoError(t, err)
	require.Equal(t, []client.SigningKey{{Kid: "k1", CreatedAt: created, Current: true}}, ks)
	hour, none := time.Hour, time.Duration(0)
	for _, d := range []*time.Duration{nil, &hour, &none} {
		rot, err := c.RotateSigningKey(ctx, d)
		require.NoError(t, err)
		require.Equal(t, "op2", rot.OperatorKey)
		require.Len(t, rot.SigningKeys, 1)
	}
	require.Equal(t, []string{
		"GET /control/v1/shards",
		"GET /control/v1/signing-keys",
		"POST /control/v1/signing-keys/rotate {}",
		`POST /control/v1/signing-keys/rotate {"retire_after":"1h"}`,
		`POST /control/v1/signing-keys/rotate {"retire_after":0}`,
	}, f.requests())
}

// The move methods start, read, list and cancel moves; a refusal is an
// API error with its field.
func TestOperatorMoves(t *testing.T) {
	t.Parallel()
	mv := `{"id":"mov_1","tenant_id":"t_1","namespace":"orders","from_shard":"s1","to_shard":"s2","state":"copying","rounds":0,"records":0,"bytes":0,
		"created_at":"2026-11-01T12:00:00Z","updated_at":"2026-11-01T12:00:00Z"}`
	f, c := newFakeControl(t, map[string]fakeAnswer{
		"POST /control/v1/namespaces/t_1/orders/move":                    {201, mv},
		"POST /control/v1/namespaces/t_1/a%2Fb/move":                     {400, `{"error":{"code":"bad_request","message":"no","field":"to_shard"}}`},
		"GET /control/v1/moves/mov_1":                                    {200, mv},
		"POST /control/v1/moves/mov_1/cancel":                            {200, mv},
		"GET /control/v1/moves?":                                         {200, `{"moves":[` + mv + `]}`},
		"GET /control/v1/moves?namespace=orders&state=failed&tenant=t_1": {200, `{"moves":[]}`},
	})
	ctx := context.Background()
	m, err := c.MoveNamespace(ctx, "t_1", "orders", "s2")
	require.NoError(t, err)
	require.Equal(t, client.MoveCopying, m.State)
	require.Equal(t, "s2", m.ToShard)
	_, err = c.MoveNamespace(ctx, "t_1", "a/b", "s1")
	e, ok := client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "to_shard", e.Field)
	m, err = c.GetMove(ctx, "mov_1")
	require.NoError(t, err)
	require.Equal(t, "mov_1", m.ID)
	m, err = c.CancelMove(ctx, "mov_1")
	require.NoError(t, err)
	require.Equal(t, "orders", m.Namespace)
	all, err := c.ListMoves(ctx, client.MoveQuery{})
	require.NoError(t, err)
	require.Len(t, all, 1)
	none, err := c.ListMoves(ctx, client.MoveQuery{Tenant: "t_1", Namespace: "orders", State: client.MoveFailed})
	require.NoError(t, err)
	require.Empty(t, none)
	require.Equal(t, []string{
		`POST /control/v1/namespaces/t_1/orders/move {"to_shard":"s2"}`,
		`POST /control/v1/namespaces/t_1/a%2Fb/move {"to_shard":"s1"}`,
		"GET /control/v1/moves/mov_1",
		"POST /control/v1/moves/mov_1/cancel",
		"GET /control/v1/moves?",
		"GET /control/v1/moves?namespace=orders&state=failed&tenant=t_1",
	}, f.requests())
}

package gateway

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// egressShard keeps a namespace's egress allow-list as a shard does: PUT
// /api/v1/namespace sets it, GET answers it (fs read the body first).
func egressShard(t *testing.T, fs *fakeShard) http.HandlerFunc {
	var held []string
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "PUT /api/v1/namespace":
			var in wire.NamespaceSettings
			require.NoError(t, json.Unmarshal([]byte(fs.last(t).Body), &in))
			held = nil
			_ = json.Unmarshal(in.EgressAllow, &held)
			fallthrough
		case "GET /api/v1/namespace":
			writeJSON(w, http.StatusOK, wire.NamespaceUsage{Retention: json.RawMessage("null"), EgressAllow: held})
		default:
			created(w, r)
		}
	}
}

// PUT /namespaces/{name}/egress sends the list, and nothing else, to the
// namespace's shard, and GET reads it there; a bad entry is a 400 naming
// it that reaches no shard; a namespace on a self-hosted shard no node
// joined is refused (409); another tenant's namespace is not found; a
// producer may not change it.
func TestNamespaceEgress(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.control.AddNamespace(tenantB, "secret", "s1", b.shard.addr())
	admin := b.key(t, tenancy.RoleAdmin, "*")
	b.shard.setHandler(egressShard(t, b.shard))

	r := b.do(t, http.MethodGet, "/api/v1/namespaces/default/egress", admin, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.JSONEq(t, `{"egress_allow":[]}`, string(r.body))

	r = b.do(t, http.MethodPut, "/api/v1/namespaces/default/egress", admin, map[string]any{"egress_allow": []string{"hooks.example.com", "*.example.net"}})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.JSONEq(t, `{"egress_allow":["hooks.example.com","*.example.net"]}`, string(r.body))
	put := b.shard.last(t)
	require.Equal(t, "PUT /api/v1/namespace", put.Method+" "+put.URI)
	require.Equal(t, tenantA+"/default", put.Header.Get(wire.ShardNamespaceHeader))
	require.JSONEq(t, `{"egress_allow":["hooks.example.com","*.example.net"]}`, put.Body, "the retention is not sent: the shard keeps it")
	r = b.do(t, http.MethodGet, "/api/v1/namespaces/default/egress", admin, nil)
	require.JSONEq(t, `{"egress_allow":["hooks.example.com","*.example.net"]}`, string(r.body))

	seen := b.shard.count()
	for field, body := range map[string]any{
		"egress_allow[1]": map[string]any{"egress_allow": []string{"ok.example.com", "bad host"}},
		"egress_allow":    map[string]any{"egress_allow": "hooks.example.com"},
	} {
		e := b.do(t, http.MethodPut, "/api/v1/namespaces/default/egress", admin, body).requireError(t, http.StatusBadRequest, apierr.BadRequest)
		require.Equal(t, field, e.Field)
	}
	e := b.do(t, http.MethodPut, "/api/v1/namespaces/default/egress", admin, map[string]any{}).requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Equal(t, "egress_allow", e.Field, "absent is not none: null is")
	require.Equal(t, seen, b.shard.count(), "a refused list reaches no shard")

	b.do(t, http.MethodGet, "/api/v1/namespaces/secret/egress", admin, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodPut, "/api/v1/namespaces/secret/egress", admin, map[string]any{"egress_allow": nil}).
		requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodPut, "/api/v1/namespaces/default/egress", b.key(t, tenancy.RoleProducer, "*"), map[string]any{"egress_allow": nil}).
		requireError(t, http.StatusForbidden, apierr.Forbidden)

	b.control.Unjoin(tenantA, "emails")
	e = b.do(t, http.MethodPut, "/api/v1/namespaces/emails/egress", admin, map[string]any{"egress_allow": []string{"a.example.com"}}).
		requireError(t, http.StatusConflict, apierr.Conflict)
	require.Equal(t, "egress_allow", e.Field)
	require.Equal(t, seen, b.shard.count(), "no shard is asked")

	r = b.do(t, http.MethodPut, "/api/v1/namespaces/default/egress", admin, []byte(`{"egress_allow":null}`))
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.JSONEq(t, `{"egress_allow":[]}`, string(r.body))
}

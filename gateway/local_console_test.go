package gateway

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/admission"
	"github.com/jobbie/jobbie/gateway/console"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A local API serves the console only when LocalTrust.Console asks: then
// a key of the bundle signs in, its session says the console is on a
// local API and names the namespaces served (none to another tenant's
// key, which a hosted signing key may vouch for too), and the session
// reads the namespace's queues through the node. Without it, the
// console's paths are not there.
func TestLocalAPIServesTheConsoleWhenAsked(t *testing.T) {
	t.Parallel()
	s := newSigner(t, "sig-1")
	node := &localNode{}
	node.set(trustBundle(t, s), time.Now())
	owner := s.Sign(claimsFor(tenantA, "key_o", tenancy.RoleOwner, "*"))

	plain, _ := startLocal(t, node, time.Minute)
	plain.do(t, http.MethodPost, "/console/api/session", "", map[string]string{"api_key": owner}, admission.CSRFHeader, "1").
		requireError(t, http.StatusNotFound, apierr.NotFound)

	b, fs := startLocal(t, node, time.Minute, func(l *LocalTrust) { l.Console = true })
	r := b.do(t, http.MethodGet, "/console/", "", nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	r, cookie := b.signIn(t, owner, wire.NamespaceHeader, "onprem")
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.NotNil(t, cookie)
	var ans console.SessionAnswer
	r.decode(t, &ans)
	require.NotNil(t, ans.Local, "the session says it is on a local API: %s", r.body)
	require.Equal(t, []string{"onprem"}, ans.Local.Namespaces)
	require.Equal(t, "onprem", ans.Namespace)
	require.Contains(t, ans.Actions, string(tenancy.ActQueueRead))

	before := fs.count()
	r = b.do(t, http.MethodGet, "/api/v1/queues", "", nil, append(cookieHeader(cookie), wire.NamespaceHeader, "onprem")...)
	require.Less(t, r.status, 300, "body: %s", r.body)
	require.Equal(t, before+1, fs.count(), "the session's read reached the node")
	got := fs.last(t)
	require.Equal(t, "GET /api/v1/queues", got.Method+" "+got.URI)
	require.Equal(t, tenancy.ShardNamespace(tenantA, "onprem"), got.Header.Get(wire.ShardNamespaceHeader))
	e := b.do(t, http.MethodGet, "/api/v1/keys", "", nil, cookieHeader(cookie)...).requireError(t, http.StatusNotFound, apierr.NotFound)
	require.Contains(t, e.Message, "not served")

	other := s.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "*"))
	r, _ = b.signIn(t, other)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body) // its namespaces are 404 here
	var theirs console.SessionAnswer
	r.decode(t, &theirs)
	require.NotNil(t, theirs.Local)
	require.Empty(t, theirs.Local.Namespaces, "another tenant learns nothing of this one's namespaces")
}

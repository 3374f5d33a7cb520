package control

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// A control path asked with a method it does not serve is 405 with the
// methods it does in Allow, not a 404 saying there is no such endpoint.
func TestHTTPWrongMethodIs405WithAllow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct{ method, path, allow string }{
		{http.MethodDelete, "/control/v1/tenants", "GET, HEAD, POST"},
		{http.MethodPost, "/control/v1/jwks", "GET, HEAD"},
	} {
		r := b.do(t, tc.method, tc.path, b.op, nil)
		requireError(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
		require.Equal(t, tc.allow, r.header.Get("Allow"), "%s %s", tc.method, tc.path)
	}
	requireError(t, b.do(t, http.MethodGet, "/control/v1/nowhere", b.op, nil), http.StatusNotFound, "not_found")
}

package outbound

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// HTTPClient keeps Do's rules for a library's own requests: inside
// addresses and plain http refused before anything is sent, redirects
// answered rather than followed, a body over MaxBody an error.
func TestHTTPClientKeepsTheRules(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/moved":
			http.Redirect(w, req, "https://10.0.0.1/", http.StatusFound)
		case "/big":
			_, _ = io.WriteString(w, strings.Repeat("x", 2000))
		default:
			_, _ = io.WriteString(w, "ok "+req.UserAgent())
		}
	})
	guarded := newClient(t, func(c *Config) { c.AllowPrivate = false }, r).HTTPClient("t")
	_, err := guarded.Get(r.URL + "/")
	requireKind(t, err, KindRefused)
	require.ErrorContains(t, err, "127.0.0.1 is not a public address: loopback")
	_, err = guarded.Get("http://93.184.216.34/")
	require.ErrorIs(t, err, ErrBadURL)
	require.Zero(t, r.hits.Load(), "nothing reached the receiver")

	allowed := newClient(t, func(c *Config) { c.MaxBody = 1000 }, r).HTTPClient("t")
	res, err := allowed.Get(r.URL + "/")
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, "ok Jobbie", string(body))

	res, err = allowed.Get(r.URL + "/moved")
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusFound, res.StatusCode, "the redirect is the answer")

	res, err = allowed.Get(r.URL + "/big")
	require.NoError(t, err)
	_, err = io.ReadAll(res.Body)
	require.ErrorContains(t, err, "answered a body over 1000 bytes")
	require.NoError(t, res.Body.Close())
}

package shard

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

func TestServesOnUnixSocket(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "s.sock")
	b := setup(t, func(c *Config) { c.SocketPath = sock })
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	req, err := http.NewRequest("POST", "http://localhost/api/v1/enqueue", strings.NewReader(`{"queue":"q"}`))
	require.NoError(t, err)
	req.Header.Set(wire.ShardNamespaceHeader, testNS)
	res, err := hc.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, 201, res.StatusCode, string(body))
	// Over the socket the caller is the local gateway, and no more: the
	// members' API is not for it.
	req, err = http.NewRequest("GET", "http://localhost/internal/v1/members", nil)
	require.NoError(t, err)
	res, err = hc.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 401, res.StatusCode)
	// The same job is visible over TCP: one server, two listeners.
	r := b.fetch([]string{"q"}, nil)
	require.Equal(t, 200, r.Status)
}

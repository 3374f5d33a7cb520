package pki

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
)

// A route behind Require answers by the caller's certificate: its peer for
// an admitted role, 403 for another role, 401 without one; a request over
// the Unix socket is the local identity.
func TestRequireChecksTheCallersCertificate(t *testing.T) {
	t.Parallel()
	ca, err := NewCA("test ca")
	require.NoError(t, err)
	server := pair(t, ca, Identity{Role: RoleControl, Node: "control1"})
	gateway := pair(t, ca, Identity{Role: RoleGateway, Node: "g1"})
	shard := pair(t, ca, Identity{Role: RoleShard, Shard: "s1", Node: "n1"})

	local := Identity{Role: RoleGateway, Node: "local"}
	app := fiber.New(fiber.Config{DisableStartupMessage: true, ErrorHandler: apierr.Handler})
	app.Get("/internal", Require(Roles(RoleGateway), &local), func(c *fiber.Ctx) error {
		return c.SendString(RequiredPeer(c).String())
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	sock := filepath.Join(t.TempDir(), "api.sock")
	uln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	go func() { _ = app.Listener(tls.NewListener(ln, server.ServerCertOptional())) }()
	go func() { _ = app.Listener(uln) }()
	t.Cleanup(func() { _ = app.Shutdown() })

	get := func(tr *http.Transport) (int, string) {
		t.Helper()
		hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
		defer tr.CloseIdleConnections()
		resp, err := hc.Get("https://" + ln.Addr().String() + "/internal")
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get(&http.Transport{TLSClientConfig: gateway.Client(Roles(RoleControl))})
	require.Equal(t, 200, code)
	require.Equal(t, "jobbie://gateway/-/g1", body)
	code, _ = get(&http.Transport{TLSClientConfig: shard.Client(Roles(RoleControl))})
	require.Equal(t, 403, code, "a shard is not a gateway")
	code, body = get(&http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}})
	require.Equal(t, 401, code, body)
	require.Contains(t, body, "client certificate")

	unix := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}
	defer unix.CloseIdleConnections()
	resp, err := (&http.Client{Transport: unix, Timeout: 5 * time.Second}).Get("http://localhost/internal")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, "jobbie://gateway/-/local", string(b))
}

package gateway

import (
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// infoOf is GET /api/v1/info, with no key, asked for host.
func infoOf(t *testing.T, b *bundle, host string) wire.GatewayInfo {
	t.Helper()
	return infoAt(t, b.http, b.base, host)
}

func infoAt(t *testing.T, hc *http.Client, base, host string) wire.GatewayInfo {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/api/v1/info", nil)
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	var info wire.GatewayInfo
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&info))
	return info
}

// GET /api/v1/info tells anyone, with no key, where the gRPC port is:
// nowhere without one; its address as an h2c URL; an https URL with
// the public certificate; the host asked for in place of an unspecified
// listen address; the configured public URL over all of them.
func TestInfoTellsTheGRPCURL(t *testing.T) {
	t.Parallel()
	require.Empty(t, infoOf(t, setup(t), "").GRPCURL, "no gRPC port")

	b := setup(t, func(c *Config) { c.GRPCAddr = "127.0.0.1:0" })
	require.Equal(t, "http://"+b.gw.GRPCAddr(), infoOf(t, b, "").GRPCURL)

	dir := t.TempDir()
	pool := selfSigned(t, dir, "grpc")
	b = setup(t, func(c *Config) {
		c.PublicCertFile, c.PublicKeyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
		c.GRPCAddr = "127.0.0.1:0"
	})
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(tr.CloseIdleConnections)
	require.Equal(t, "https://"+b.gw.GRPCAddr(), infoAt(t, &http.Client{Transport: tr}, "https://"+b.gw.Addr(), "").GRPCURL)

	b = setup(t, func(c *Config) { c.GRPCAddr = ":0" })
	_, port, err := net.SplitHostPort(b.gw.GRPCAddr())
	require.NoError(t, err)
	require.Equal(t, "http://jobbie.example.com:"+port, infoOf(t, b, "jobbie.example.com:8080").GRPCURL)
	require.Equal(t, "http://[::1]:"+port, infoOf(t, b, "[::1]:8080").GRPCURL)

	b = setup(t, func(c *Config) { c.GRPCAddr = "127.0.0.1:0"; c.GRPCPublicURL = "https://grpc.jobbie.example.com" })
	require.Equal(t, "https://grpc.jobbie.example.com", infoOf(t, b, "").GRPCURL)
}

// A public URL that is not an http(s) URL with a host is refused.
func TestGRPCPublicURLValidated(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"grpc.example.com:9090", "ftp://grpc.example.com", "https://", "https://grpc.example.com?x=1"} {
		cfg := Config{GRPCPublicURL: bad}.WithDefaults()
		require.ErrorContains(t, cfg.validateLimits(), "GRPCPublicURL", bad)
	}
	require.NoError(t, Config{GRPCPublicURL: "https://grpc.example.com:443"}.WithDefaults().validateLimits())
}

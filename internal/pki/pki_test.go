package pki

import (
	"crypto/tls"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestIdentityRoundTrip(t *testing.T) {
	t.Parallel()
	for _, id := range []Identity{
		{Role: RoleShard, Shard: "s1", Node: "n1"},
		{Role: RoleGateway, Node: "gw-1"},
		{Role: RoleControl, Node: "control1"},
		{Role: RoleOperator, Node: "alice"},
	} {
		back, err := ParseIdentity(id.String())
		require.NoError(t, err, id)
		require.Equal(t, id, back)
	}
	require.Equal(t, "jobbie://shard/s1/n1", Identity{Role: RoleShard, Shard: "s1", Node: "n1"}.String())
	for _, bad := range []string{"jobbie://shard/-/n1", "jobbie://gateway/s1/g1", "jobbie://king/-/x", "jobbie://shard/s1", "http://shard/s1/n1", "jobbie://shard/s 1/n1"} {
		_, err := ParseIdentity(bad)
		require.Error(t, err, bad)
	}
}

// pair issues credentials for id from ca.
func pair(t *testing.T, ca *CA, id Identity) *Credentials {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue(id, []string{"127.0.0.1", "localhost"}, time.Hour)
	require.NoError(t, err)
	c, err := NewCredentials(certPEM, keyPEM, ca.CertPEM())
	require.NoError(t, err)
	require.Equal(t, id, c.Identity())
	return c
}

// handshake runs one mutual TLS handshake over loopback and returns each
// side's error and, on success, the identity the server saw.
func handshake(t *testing.T, server, client *tls.Config) (seen Identity, serverErr, clientErr error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			serverErr = err
			return
		}
		defer c.Close()
		tc := tls.Server(c, server)
		_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
		if serverErr = tc.Handshake(); serverErr == nil {
			cs := tc.ConnectionState()
			seen, _ = PeerIdentity(&cs)
			_, _ = tc.Write([]byte("x")) // lets the client see the outcome
		}
	}()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ln.Addr().String(), client)
	if err == nil {
		// TLS 1.3: a client learns that the server refused its certificate
		// on its first read.
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = io.ReadFull(c, make([]byte, 1))
		c.Close()
	}
	<-done
	return seen, serverErr, err
}

func TestMutualTLSChecksIdentitiesBothWays(t *testing.T) {
	t.Parallel()
	ca, err := NewCA("test ca")
	require.NoError(t, err)
	shard := pair(t, ca, Identity{Role: RoleShard, Shard: "s1", Node: "n1"})
	gateway := pair(t, ca, Identity{Role: RoleGateway, Node: "g1"})
	otherShard := pair(t, ca, Identity{Role: RoleShard, Shard: "s2", Node: "n1"})

	// A gateway reaches shard s1's node and is admitted.
	seen, sErr, cErr := handshake(t, shard.Server(Roles(RoleGateway)), gateway.Client(ShardMember("s1")))
	require.NoError(t, sErr)
	require.NoError(t, cErr)
	require.Equal(t, gateway.Identity(), seen)

	// The gateway expected s1 but reached a node of s2: it refuses.
	_, _, cErr = handshake(t, otherShard.Server(Roles(RoleGateway)), gateway.Client(ShardMember("s1")))
	require.ErrorContains(t, cErr, "not a member of shard s1")

	// A shard node of another cluster is not a gateway: the server refuses.
	_, sErr, cErr = handshake(t, shard.Server(Roles(RoleGateway)), otherShard.Client(ShardMember("s1")))
	require.ErrorContains(t, sErr, "may not do this")
	require.Error(t, cErr)

	// A certificate from another CA is refused by both sides.
	rogueCA, err := NewCA("rogue")
	require.NoError(t, err)
	rogue := pair(t, rogueCA, Identity{Role: RoleGateway, Node: "g1"})
	_, sErr, _ = handshake(t, shard.Server(Roles(RoleGateway)), rogue.Client(ShardMember("s1")))
	require.Error(t, sErr)
	_, _, cErr = handshake(t, pair(t, rogueCA, Identity{Role: RoleShard, Shard: "s1", Node: "n1"}).Server(nil), gateway.Client(ShardMember("s1")))
	require.ErrorContains(t, cErr, "not from the trusted CA")

	// No client certificate at all.
	_, sErr, _ = handshake(t, shard.Server(Roles(RoleGateway)), &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
	require.Error(t, sErr)
}

func TestCAFilesAndReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, err := NewCA("test ca")
	require.NoError(t, err)
	require.NoError(t, ca.WriteFiles(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")))
	st, err := os.Stat(filepath.Join(dir, "ca.key"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the CA key is its owner's alone")
	again, err := LoadCA(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"))
	require.NoError(t, err)

	id := Identity{Role: RoleControl, Node: "control1"}
	write := func(id Identity) {
		certPEM, keyPEM, err := again.Issue(id, nil, 0)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "node.crt"), certPEM, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "node.key"), keyPEM, 0o600))
	}
	write(id)
	creds, err := LoadCredentials(filepath.Join(dir, "node.crt"), filepath.Join(dir, "node.key"), filepath.Join(dir, "ca.crt"))
	require.NoError(t, err)
	require.Equal(t, id, creds.Identity())
	require.WithinDuration(t, time.Now().Add(DefaultValidity), creds.NotAfter(), time.Hour)

	first := creds.NotAfter()
	write(id)
	require.NoError(t, creds.Reload(), "a renewed certificate for the same identity")
	require.False(t, creds.NotAfter().Before(first))
	write(Identity{Role: RoleGateway, Node: "g1"})
	require.ErrorContains(t, creds.Reload(), "not jobbie://control/-/control1")
	require.Equal(t, id, creds.Identity(), "a refused reload changes nothing")

	_, err = LoadCA(filepath.Join(dir, "node.crt"), filepath.Join(dir, "node.key"))
	require.ErrorContains(t, err, "not a certificate authority")
	_, _, err = ca.Issue(Identity{Role: RoleShard, Node: "n1"}, nil, 0)
	require.Error(t, err, "a shard identity names its shard")
}

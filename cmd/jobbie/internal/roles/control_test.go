package roles

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli"
	"github.com/jobbie/jobbie/control"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// startControl starts control node id (joining join, when not empty) on
// free ports with its own certificate.
func startControl(t *testing.T, ca *pkitest.CA, id, join string) *control.Server {
	t.Helper()
	cfg := control.Config{DataDir: t.TempDir(), HTTPAddr: "127.0.0.1:0", NodeID: id, PullInterval: -1,
		TLS: ca.Creds(t, pki.Identity{Role: pki.RoleControl, Node: id}), Logger: slog.New(slog.DiscardHandler),
		RaftTimeout: 100 * time.Millisecond, Shards: []control.ShardInfo{{ID: "s1", Addr: "https://127.0.0.1:1"}}}
	if join != "" {
		cfg.Join = []string{join}
	}
	srv, err := control.New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, srv.Start(ctx))
	t.Cleanup(func() { _ = srv.Stop() })
	return srv
}

// The control member commands list, remove and add members through any
// node, with an operator certificate.
func TestControlMemberCommands(t *testing.T) {
	ca := pkitest.New(t)
	c1 := startControl(t, ca, "control1", "")
	c2 := startControl(t, ca, "control2", c1.Addr())
	a := &memberAdmin{peer: pki.RoleControl, url: c2.Addr(), tls: writeCreds(t, ca, pkitest.Operator), output: cli.OutTable}
	ctx := context.Background()

	var out strings.Builder
	require.Eventually(t, func() bool {
		out.Reset()
		return a.members(ctx, http.MethodGet, "/internal/v1/members", nil, &out) == nil && strings.Contains(out.String(), "control1  leader")
	}, 10*time.Second, 20*time.Millisecond)
	require.Contains(t, out.String(), "control2  follower")
	require.Contains(t, out.String(), c1.Addr(), "the members' HTTP addresses are replicated")

	// Through the follower: the leader removes it.
	require.NoError(t, a.send(ctx, http.MethodDelete, "/internal/v1/members/control2", nil, nil))
	a.url, a.output = c1.Addr(), cli.OutJSON
	out.Reset()
	require.NoError(t, a.members(ctx, http.MethodGet, "/internal/v1/members", nil, &out))
	var l wire.MemberList
	require.NoError(t, json.Unmarshal([]byte(out.String()), &l))
	require.Len(t, l.Members, 1)
	err := a.send(ctx, http.MethodDelete, "/internal/v1/members/control9", nil, nil)
	require.ErrorContains(t, err, "(not_found)")
	// Bad input is refused naming the field.
	err = a.send(ctx, http.MethodPost, "/internal/v1/members", []byte(`{"node_id":"control3","raft_addr":"nowhere"}`), nil)
	require.ErrorContains(t, err, "raft_addr")
}

// The commands admit only a control node's certificate at the other end.
func TestControlAdminNeedsControlCertificate(t *testing.T) {
	ca := pkitest.New(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) }))
	srv.Listener = tls.NewListener(srv.Listener, ca.Creds(t, pkitest.Shard("s1", "n1")).Server(nil))
	srv.Start()
	defer srv.Close()
	a := &memberAdmin{peer: pki.RoleControl, url: srv.Listener.Addr().String(), tls: writeCreds(t, ca, pkitest.Operator), output: cli.OutTable}
	require.ErrorContains(t, a.send(context.Background(), http.MethodGet, "/internal/v1/members", nil, nil), "shard")
	a.tls = writeCreds(t, ca, pkitest.Gateway)
	require.ErrorContains(t, a.send(context.Background(), http.MethodGet, "/internal/v1/members", nil, nil), "needs a certificate of role operator")
}

package selfhosted

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// syncBuffer is a log sink the test reads while the renewer writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

// A node joins through a list of control URLs whose first refuses
// connections, keeps the list in join.json, and renews its certificate
// there in place, trusting for control only the hosted CA of its ca.crt;
// once its shard is revoked, renewal is refused, retried, and node.crt
// stays as it was.
func TestSelfHostedNodeJoinsAndRenews(t *testing.T) {
	t.Parallel()
	hosted := pkitest.New(t)
	shCA, err := pki.NewCA("self-hosted")
	require.NoError(t, err)
	const validity = 10 * time.Second
	ctl, err := control.New(control.Config{DataDir: t.TempDir(), HTTPAddr: "127.0.0.1:0", TLS: hosted.Creds(t, pkitest.Control),
		Shards: []control.ShardInfo{{ID: "s1", Addr: "http://127.0.0.1:9001"}}, Logger: slog.New(slog.DiscardHandler),
		RaftTimeout: 50 * time.Millisecond, PullInterval: -1, SelfHostedCA: shCA, SelfHostedCertValidity: validity})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	require.NoError(t, ctl.Start(ctx))
	t.Cleanup(func() { require.NoError(t, ctl.Stop()) })
	tenant, err := ctl.CreateTenant(ctx, "acme")
	require.NoError(t, err)
	tok, err := ctl.CreateJoinToken(ctx, tenant.Tenant.ID, wire.CreateJoinTokenRequest{Name: "dc1"})
	require.NoError(t, err)

	caFile := filepath.Join(t.TempDir(), "hosted-ca.crt")
	require.NoError(t, os.WriteFile(caFile, hosted.CertPEM(), 0o600))
	dataDir := t.TempDir()
	urls := []string{"https://127.0.0.1:1", "https://" + ctl.Addr()} // the first refuses connections
	creds, j, err := Open(ctx, dataDir, "n1", Joining{Token: tok.Token, ControlURLs: urls, CAFile: caFile}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, urls, j.ControlURLs)
	require.Equal(t, tok.ShardID, j.ShardID)
	var stored Record
	b, err := os.ReadFile(File(dataDir, RecordFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &stored))
	require.Equal(t, urls, stored.ControlURLs)

	logs := &syncBuffer{}
	r, err := newRenewer(dataDir, j.ControlURLs, nil, creds, slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	certFile := File(dataDir, CertFile)
	expiries := []time.Time{creds.NotAfter()}
	go r.run(ctx)
	for deadline := time.Now().Add(4 * validity); len(expiries) < 3; time.Sleep(20 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "renewed twice in place: %s", logs)
		if na := creds.NotAfter(); na.After(expiries[len(expiries)-1]) {
			require.True(t, time.Now().Before(expiries[len(expiries)-1]), "renewed before expiry")
			expiries = append(expiries, na)
		}
	}
	st, err := os.Stat(certFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	onDisk, err := pki.LoadCredentials(certFile, File(dataDir, KeyFile), File(dataDir, TrustFile))
	require.NoError(t, err)
	require.Equal(t, creds.Identity(), onDisk.Identity())
	require.Equal(t, pki.Identity{Role: pki.RoleShard, Shard: tok.ShardID, Node: "n1", Tenant: tenant.Tenant.ID}, creds.Identity())

	// Revoked: refused, retried, nothing replaced.
	require.NoError(t, ctl.RevokeShard(ctx, tenant.Tenant.ID, tok.ShardID))
	before, err := os.ReadFile(certFile)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return logs.count("certificate renewal failed") >= 2 }, 2*validity, 50*time.Millisecond)
	require.Contains(t, logs.String(), "403 Forbidden")
	after, err := os.ReadFile(certFile)
	require.NoError(t, err)
	require.Equal(t, before, after)
}

func TestRenewalPacing(t *testing.T) {
	require.Equal(t, time.Minute, checkPeriod(365*24*time.Hour))
	require.Equal(t, 5*time.Minute, maxRetry(365*24*time.Hour))
	require.Equal(t, 333*time.Millisecond, checkPeriod(20*time.Second).Round(time.Millisecond))
	require.Equal(t, time.Second, maxRetry(20*time.Second))
	require.Equal(t, 100*time.Millisecond, checkPeriod(time.Second))
	for range 100 {
		d := jitter(time.Second)
		require.True(t, d >= 800*time.Millisecond && d <= time.Second, "%s", d)
	}
}

// Without a control URL renewal is off, and says so; a control reached
// without TLS is refused.
func TestStartRenewalNeedsControl(t *testing.T) {
	t.Parallel()
	creds := pkitest.New(t).Creds(t, pkitest.TenantShard("sh_1", "n1", "t_0123456789abcdefghijklmnop"))
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	require.NoError(t, StartRenewal(context.Background(), t.TempDir(), nil, "", creds, log))
	require.Contains(t, logs.String(), "certificate renewal is off")
	err := StartRenewal(context.Background(), t.TempDir(), []string{"http://control:8081"}, "", creds, log)
	require.EqualError(t, err, `certificate renewal: control URL "http://control:8081": control is reached over TLS (https://)`)
}

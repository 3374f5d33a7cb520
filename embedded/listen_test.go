package embedded

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

func openListening(t *testing.T, dir string, extra ...string) *Embedded {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := Open(ctx, Options{Dir: dir, Listen: "127.0.0.1:0", Namespaces: extra, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return e
}

// Options.Listen serves the API to other processes behind the owner key
// the node minted: the key works over HTTP on the chosen address and
// reaches the same jobs as the program's own client; no key, or a key
// the node did not sign, is a 401; a namespace not served is a 404; the
// key is kept in the data directory, owner-only, and works after a
// restart.
func TestListenServesTheAPIBehindTheOwnerKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	e := openListening(t, dir, "reports")
	key := e.OwnerKey()
	require.NotEmpty(t, key)
	url := "http://" + e.Addr()

	remote := client.New(url, key)
	defer remote.CloseIdleConnections()
	res, err := remote.Enqueue(ctx, client.EnqueueRequest{Queue: "q", Payload: 1})
	require.NoError(t, err)
	j, err := e.Client().GetJob(ctx, res.JobID)
	require.NoError(t, err, "the program's client sees the job enqueued over the listener")
	require.Equal(t, "q", j.Queue)
	res, err = remote.WithNamespace("reports").Enqueue(ctx, client.EnqueueRequest{Queue: "r", Payload: 1})
	require.NoError(t, err)
	_, err = e.Client(client.WithNamespace("reports")).GetJob(ctx, res.JobID)
	require.NoError(t, err)

	_, err = remote.WithNamespace("elsewhere").Enqueue(ctx, client.EnqueueRequest{Queue: "q", Payload: 1})
	require.True(t, client.IsNotFound(err), "a namespace not served: %v", err)
	anon := client.New(url, "")
	defer anon.CloseIdleConnections()
	_, err = anon.Enqueue(ctx, client.EnqueueRequest{Queue: "q", Payload: 1})
	require.True(t, client.IsUnauthenticated(err), "no key: %v", err)
	_, other, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	forged, err := ownerToken(other, "default")
	require.NoError(t, err)
	stranger := client.New(url, forged)
	defer stranger.CloseIdleConnections()
	_, err = stranger.Enqueue(ctx, client.EnqueueRequest{Queue: "q", Payload: 1})
	require.True(t, client.IsUnauthenticated(err), "a key signed by another key: %v", err)

	fi, err := os.Stat(filepath.Join(dir, "owner.key"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.NoError(t, e.Close())
	_, err = net.DialTimeout("tcp", strings.TrimPrefix(url, "http://"), time.Second)
	require.Error(t, err, "Close stops serving")

	e = openListening(t, dir)
	defer e.Close()
	require.Equal(t, key, e.OwnerKey())
	again := client.New("http://"+e.Addr(), key)
	defer again.CloseIdleConnections()
	_, err = again.Enqueue(ctx, client.EnqueueRequest{Queue: "q", Payload: 1})
	require.NoError(t, err)
	require.Empty(t, (&Embedded{}).Addr())
}

package selfhosted

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/wire"
)

// The local API's socket is in the data directory, or in a temporary
// directory of its own when that path is too long for a socket; cleanup
// removes what it made. A trust that would go stale between two checks
// is refused.
func TestLocalAPISocket(t *testing.T) {
	t.Parallel()
	l := LocalAPI{Addr: "127.0.0.1:0", MaxOffline: DefaultMaxOffline}
	dir := t.TempDir()
	sock, cleanup, err := l.Socket(dir)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "local-api.sock"), sock)
	require.NoError(t, os.WriteFile(sock, nil, 0o600))
	cleanup()
	require.NoFileExists(t, sock)

	long := filepath.Join(dir, strings.Repeat("d", 100))
	sock, cleanup, err = l.Socket(long)
	require.NoError(t, err)
	require.NotContains(t, sock, long)
	require.DirExists(t, filepath.Dir(sock))
	cleanup()
	require.NoDirExists(t, filepath.Dir(sock))

	l.MaxOffline = 2 * time.Second
	_, _, err = l.Socket(dir)
	require.EqualError(t, err, "--local-api-max-offline 2s: must exceed 2s (the trust is checked every second)")
}

// Only a node whose certificate names its tenant serves a local API.
func TestLocalAPINeedsATenant(t *testing.T) {
	t.Parallel()
	none := func() (wire.TrustBundle, time.Time, bool) { return wire.TrustBundle{}, time.Time{}, false }
	_, err := LocalAPI{Addr: "127.0.0.1:0", MaxOffline: DefaultMaxOffline}.Start(context.Background(), none,
		pki.Identity{Role: pki.RoleShard, Shard: "s1", Node: "n1"}, "/nowhere.sock", slog.New(slog.DiscardHandler))
	require.EqualError(t, err, "--local-api: this node's certificate names no tenant")
}

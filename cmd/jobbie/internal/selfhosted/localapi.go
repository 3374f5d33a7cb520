package selfhosted

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/jobbie/jobbie/gateway"
	"github.com/jobbie/jobbie/internal/listen"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/wire"
)

// LocalAPI is a self-hosted node's local API (--local-api): a gateway in
// the node's process that judges the tenant's keys by the trust bundle
// the hosted gateways push (gateway.LocalTrust), so the tenant's workers
// go on while the hosted service is unreachable.
type LocalAPI struct {
	Addr string // host:port
	// MaxOffline is how long it serves on without a trust bundle.
	MaxOffline time.Duration
	// CertFile and KeyFile serve it over TLS; none: plain HTTP.
	CertFile, KeyFile string
	// Listeners is the node's group (shard.Node.Listeners): the node's
	// /readyz and the local API's fail while any of their listeners
	// cannot accept.
	Listeners *listen.Group
}

// DefaultMaxOffline is how long a local API serves on without a trust
// bundle: a key revoked while the hosted service is unreachable works on
// the local API until then.
const DefaultMaxOffline = 10 * time.Minute

// Socket is where the node also listens for its local API: in the data
// directory, or in a private temporary directory when that path is too
// long for a socket address (cleanup removes it).
func (l LocalAPI) Socket(dataDir string) (path string, cleanup func(), err error) {
	if l.MaxOffline <= 2*time.Second {
		return "", nil, fmt.Errorf("--local-api-max-offline %s: must exceed 2s (the trust is checked every second)", l.MaxOffline)
	}
	if p, err := filepath.Abs(filepath.Join(dataDir, "local-api.sock")); err == nil && len(p) <= 100 {
		return p, func() { _ = os.Remove(p) }, nil
	}
	dir, err := os.MkdirTemp("", "jobbie-local-")
	if err != nil {
		return "", nil, fmt.Errorf("--local-api: a directory for the node's socket: %w", err)
	}
	return filepath.Join(dir, "local-api.sock"), func() { _ = os.RemoveAll(dir) }, nil
}

// TrustBundle is the newest trust bundle a node holds and when it came;
// ok is false before the first (*shard.Node.TrustBundle).
type TrustBundle func() (b wire.TrustBundle, receivedAt time.Time, ok bool)

// Start serves the local API for node id's shard and tenant, reaching the
// node on its socket sock.
func (l LocalAPI) Start(ctx context.Context, bundle TrustBundle, id pki.Identity, sock string, log *slog.Logger) (*gateway.Server, error) {
	if id.Tenant == "" {
		return nil, errors.New("--local-api: this node's certificate names no tenant")
	}
	gw, err := gateway.New(gateway.Config{Addr: l.Addr, RevocationMaxAge: l.MaxOffline, Logger: log.With("local_api", l.Addr),
		PublicCertFile: l.CertFile, PublicKeyFile: l.KeyFile, Listeners: l.Listeners,
		Local: &gateway.LocalTrust{TenantID: id.Tenant, ShardID: id.Shard, ShardAddr: "unix:" + sock, Bundle: bundle}})
	if err != nil {
		return nil, err
	}
	if err := gw.Start(ctx); err != nil {
		return nil, fmt.Errorf("--local-api %s: %w", l.Addr, err)
	}
	return gw, nil
}

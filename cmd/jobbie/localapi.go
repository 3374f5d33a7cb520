package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/gateway"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/shard"
)

// A self-hosted node's local API: a gateway in the node's process that
// judges the tenant's keys by the trust bundle the hosted gateways push
// (gateway.LocalTrust), so the tenant's workers go on while the hosted
// service is unreachable.
type localAPIOptions struct {
	addr       string
	maxOffline time.Duration
	public     publicTLSFlags
}

// defaultMaxOffline is how long a local API serves on without a trust
// bundle: a key revoked while the hosted service is unreachable works on
// the local API until then.
const defaultMaxOffline = 10 * time.Minute

func (l *localAPIOptions) flags(f *pflag.FlagSet) {
	f.StringVar(&l.addr, "local-api", "", "self-hosted: also serve the tenant's API for this shard's namespaces here, host:port, to workers in its network (plain HTTP unless --local-api-tls-cert)")
	l.public.flags(f, "local-api-tls", "the local API")
	f.DurationVar(&l.maxOffline, "local-api-max-offline", defaultMaxOffline, "self-hosted: the local API refuses keys (503 revocations_stale) once no trust bundle has come from the hosted service for this long")
}

// socket is where the node also listens for its local API: in the data
// directory, or in a private temporary directory when that path is too
// long for a socket address (cleanup removes it).
func (l localAPIOptions) socket(dataDir string) (path string, cleanup func(), err error) {
	if l.maxOffline <= 2*time.Second {
		return "", nil, fmt.Errorf("--local-api-max-offline %s: must exceed 2s (the trust is checked every second)", l.maxOffline)
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

// start serves the local API for node id's shard and tenant.
func (l localAPIOptions) start(ctx context.Context, sh *shard.Node, id pki.Identity, sock string, log *slog.Logger) (*gateway.Server, error) {
	if id.Tenant == "" {
		return nil, errors.New("--local-api: this node's certificate names no tenant")
	}
	gw, err := gateway.New(gateway.Config{Addr: l.addr, RevocationMaxAge: l.maxOffline, Logger: log.With("local_api", l.addr),
		PublicCertFile: l.public.cert, PublicKeyFile: l.public.key,
		Local: &gateway.LocalTrust{TenantID: id.Tenant, ShardID: id.Shard, ShardAddr: "unix:" + sock, Bundle: sh.TrustBundle}})
	if err != nil {
		return nil, err
	}
	if err := gw.Start(ctx); err != nil {
		return nil, fmt.Errorf("--local-api %s: %w", l.addr, err)
	}
	return gw, nil
}

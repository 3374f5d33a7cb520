package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/vfs"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/shard"
	"github.com/jobbie/jobbie/tenancy"
)

// Options configure an embedded node. Zero fields take the defaults in
// their comments.
type Options struct {
	// Dir is the data directory (required): the node's Raft log and
	// Pebble state, and its socket. It is made readable by its owner
	// only. Jobs enqueued before Close are there at the next Open.
	Dir string
	// Namespace is where a client's requests go unless it names another
	// (client.WithNamespace). Default "default".
	Namespace string
	// Logger takes the node's warnings. Default slog.Default().
	Logger *slog.Logger
	// Listen, when set, serves the node's HTTP API to other processes at
	// this address (host:port; port 0 picks one, see Addr) behind API
	// keys: the owner key OwnerKey returns, and Namespace and Namespaces
	// alone (listen.go). Default: not served; the program's own clients
	// need none of it.
	Listen string
	// Namespaces are served on Listen beside Namespace.
	Namespaces []string
	// Console, with Listen, also serves the console at /console/ on it,
	// signed in with the owner key: its screens of jobs, queues,
	// schedules, workers, events and costs; those of tenant
	// administration say they are not available. Default off: a listener
	// for other programs gets no web front end it was not asked for.
	Console bool
}

// tenantID is the tenant every namespace of an embedded node belongs to.
// A shard keys its namespaces by tenant and name (tenancy.ShardNamespace);
// an embedded node has one owner, the program, so one fixed id keeps the
// keys the same from run to run.
const tenantID = "t_embedded000000000000000000"

// baseURL is what the clients' requests name; the transport takes them to
// the node's socket whatever it says.
const baseURL = "http://jobbie.embedded"

// Embedded is a running node. Its clients are safe for concurrent use.
type Embedded struct {
	node      *shard.Node
	transport *shardTransport
	cleanup   func()    // removes the socket
	lock      io.Closer // the data directory's, held until Close
	api       *api      // Options.Listen's; nil when not served
	closeOnce sync.Once
	closeErr  error
}

// Open starts a node on o.Dir and returns once it leads its one-node
// group and has applied its log (at most until ctx ends).
func Open(ctx context.Context, o Options) (*Embedded, error) {
	if o.Dir == "" {
		return nil, errors.New("embedded: Options.Dir is required")
	}
	if o.Namespace == "" {
		o.Namespace = tenancy.DefaultNamespace
	}
	if err := tenancy.ValidateNamespace(o.Namespace); err != nil {
		return nil, fmt.Errorf("embedded: Options.Namespace: %w", err)
	}
	if o.Console && o.Listen == "" {
		return nil, errors.New("embedded: Options.Console needs Options.Listen: the console is served on that listener")
	}
	for _, ns := range o.Namespaces {
		if err := tenancy.ValidateNamespace(ns); err != nil {
			return nil, fmt.Errorf("embedded: Options.Namespaces: %w", err)
		}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if err := privateDir(o.Dir); err != nil {
		return nil, fmt.Errorf("embedded: %w", err)
	}
	// One node per directory, in this process or another: the lock comes
	// before anything is touched, the socket of a running node above all.
	lock, err := vfs.Default.Lock(filepath.Join(o.Dir, "embedded.lock"))
	if err != nil {
		return nil, fmt.Errorf("embedded: %s is in use by another node: %w", o.Dir, err)
	}
	e, err := openNode(ctx, o)
	if err != nil {
		_ = lock.Close()
		return nil, err
	}
	e.lock = lock
	return e, nil
}

// openNode starts the node of a locked directory.
func openNode(ctx context.Context, o Options) (*Embedded, error) {
	creds, err := nodeCredentials()
	if err != nil {
		return nil, fmt.Errorf("embedded: %w", err)
	}
	sock, cleanup, err := socketPath(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("embedded: %w", err)
	}
	node, err := shard.New(shard.Config{
		DataDir: filepath.Join(o.Dir, "shard"), ShardID: shardID, NodeID: nodeID, Bootstrap: true, TLS: creds,
		// The node's TCP listeners take only certificates of a CA that
		// lives in this process's memory: nothing outside reaches them.
		HTTPAddr: "127.0.0.1:0", RaftAddr: "127.0.0.1:0", SocketPath: sock, Logger: o.Logger,
	})
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("embedded: %w", err)
	}
	e := &Embedded{node: node, cleanup: cleanup, transport: newShardTransport(sock, tenantID, o.Namespace)}
	if err := e.start(ctx, o, sock); err != nil {
		_ = e.Close()
		return nil, err
	}
	return e, nil
}

func (e *Embedded) start(ctx context.Context, o Options, sock string) error {
	if err := e.node.Start(); err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	if err := e.node.WaitLeader(ctx); err != nil {
		return fmt.Errorf("embedded: waiting for the node to lead: %w", err)
	}
	if o.Listen != "" {
		a, err := serve(ctx, o, sock, o.Logger)
		if err != nil {
			return fmt.Errorf("embedded: %w", err)
		}
		e.api = a
	}
	return nil
}

// Addr is where Options.Listen serves the API; "" when it does not.
func (e *Embedded) Addr() string {
	if e.api == nil {
		return ""
	}
	return e.api.gw.Addr()
}

// OwnerKey is the owner key of the API served on Options.Listen (kept in
// <dir>/owner.key); "" when it is not served.
func (e *Embedded) OwnerKey() string {
	if e.api == nil {
		return ""
	}
	return e.api.ownerKey
}

// Client is a client of the node, in its default namespace unless opts
// say otherwise (client.WithNamespace, WithWorkerID …); every client
// shares one pool of connections. No key is needed, and any given is not
// sent.
func (e *Embedded) Client(opts ...client.Option) *client.Client {
	hc := &http.Client{Transport: e.transport}
	return client.New(baseURL, "", append([]client.Option{client.WithHTTPClient(hc)}, opts...)...)
}

// Close stops the node: requests in flight end (stop workers first, so
// that they finish their jobs), and the state is closed. Jobs not yet
// worked stay in the data directory. Close may be called more than once.
func (e *Embedded) Close() error {
	e.closeOnce.Do(func() {
		if e.api != nil {
			_ = e.api.gw.Stop()
		}
		e.closeErr = e.node.Stop()
		e.transport.http.CloseIdleConnections()
		e.cleanup()
		if e.lock != nil {
			_ = e.lock.Close()
		}
	})
	return e.closeErr
}

// The node's place in its (one-node) group.
const (
	shardID = "s1"
	nodeID  = "n1"
)

// nodeCredentials is the node's certificate from a CA made for this run
// and never written: a shard runs every internal channel over mutual TLS,
// and an embedded node has no peer to show it to.
func nodeCredentials() (*pki.Credentials, error) {
	ca, err := pki.NewCA("jobbie embedded")
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := ca.Issue(pki.Identity{Role: pki.RoleShard, Shard: shardID, Node: nodeID},
		[]string{"127.0.0.1"}, 100*365*24*time.Hour)
	if err != nil {
		return nil, err
	}
	return pki.NewCredentials(certPEM, keyPEM, ca.CertPEM())
}

// privateDir makes dir, or takes the one that exists, readable by its
// owner only.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if mode := fi.Mode().Perm(); mode&0o077 != 0 {
		return os.Chmod(dir, mode&^0o077)
	}
	return nil
}

// socketPath is where the node listens for its clients: in the data
// directory, or in a private temporary directory when that path is too
// long for a socket address (cleanup removes it).
func socketPath(dir string) (string, func(), error) {
	if p, err := filepath.Abs(filepath.Join(dir, "jobbie.sock")); err == nil && len(p) <= 100 {
		return p, func() { _ = os.Remove(p) }, nil
	}
	tmp, err := os.MkdirTemp("", "jobbie-embedded-")
	if err != nil {
		return "", nil, fmt.Errorf("a directory for the node's socket: %w", err)
	}
	return filepath.Join(tmp, "jobbie.sock"), func() { _ = os.RemoveAll(tmp) }, nil
}

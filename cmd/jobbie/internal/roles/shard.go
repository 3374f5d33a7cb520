package roles

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/rolelog"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/selfhosted"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/settings"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/shard"
)

type shardOptions struct {
	nodeID, shardID, dataDir        string
	httpAddr, raftAddr, advertise   string
	bootstrap                       bool
	discover, joinHTTP              string
	controlURL, pprofAddr           string
	capacity                        uint64
	fast                            bool
	raftTimeout                     time.Duration
	snapshotThreshold, trailingLogs uint64
	bulkSyncMax                     int
	unfair                          bool
	effects                         bool
	push                            pushFlags
	traceShare                      bool // --trace-share-system
	masterKeyFile                   string
	alertInterval                   time.Duration
	gossip                          roleGossip
	tls                             roleTLS
	// A self-hosted shard's node: joins with a tenant's token, then runs
	// on what it was given (selfHosted below).
	joinToken, joinControl, caFile, tunnelAddr string
	shardIDSet                                 bool // --shard-id given
	local                                      localAPIFlags
	log                                        rolelog.Options
}

// shardCmd is `jobbie shard`: one node of a shard cluster, hosted or
// self-hosted, and the commands that manage a cluster's members.
func shardCmd() *cobra.Command {
	var o shardOptions
	cmd := &cobra.Command{
		Use:   "shard",
		Short: "Run one node of a shard cluster (a Raft group of 1, 3 or 5), or manage its members",
		Long: `shard runs one node of a shard cluster: the job engine on Raft and Pebble,
and its internal HTTP API. Start the first node of a new cluster with
--bootstrap and the others with --join (gossip addresses of any running
member) or --discover dns:<name>: a node with no state asks the cluster to
add it as a voter, then catches up from the leader's log or, if that was
compacted, from a snapshot. A node that restarts resumes from its own data
directory and needs neither flag.

Any node answers: reads come from its own state, writes are forwarded to
the leader. While the cluster elects a leader, writes get 503 with
Retry-After. Every node joins the gossip pool as role "shard" and
advertises its shard, Raft state, term, leader and HTTP address.

Durable by default: the Raft log is fsynced before a write is
acknowledged. --fast skips that fsync: a write then survives the process
being killed and the loss of a minority of machines, but not a power cut
that takes down a majority of the cluster at once.

Every channel is mutual TLS with the node's shard certificate (jobbie
certs issue --role shard --shard <id> --node <id>): Raft and forwarded
writes only with nodes of the same shard, registration only with control;
its API admits gateways, its own members and operators (docs/trust.md).
SIGHUP rereads the certificate and the gossip keys.

A self-hosted node (a tenant's own shard, in the tenant's network) starts
the first time with --join-token (minted by the tenant's owner:
POST /api/v1/shards/join-tokens), --control-url and --ca-file (the hosted
service's CA): it makes its key, has control sign its certificate for the
token's shard, and stores them in <data-dir>/selfhosted (0600); later
starts reuse them without the token. Its shard id is the token's. It
renews its certificate at control (the URLs it joined at, or
--control-url) once a third of its lifetime is left, and uses the new one
at once, without a restart; a failure is retried with backoff. It
opens no port to the hosted service: it dials the gateway's tunnel
listener (--tunnel, or what control named) and serves the gateway over
that connection, reconnecting with backoff. Raft and its other listener
are for its own cluster's nodes only: same shard, same tenant.

--local-api ADDR also serves the tenant's API for the namespaces on this
shard to workers in the tenant's network, and goes on serving them while
the hosted service is unreachable: it judges API keys by the trust bundle
the hosted gateways push over the tunnel (signing keys, the tenant's
revocations and roles), until none has come for --local-api-max-offline
(docs/operate/self-hosting.md, "Working offline").`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			o.shardIDSet = cmd.Flags().Changed("shard-id")
			return runShard(ctx, o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.nodeID, "node-id", "", "this node's Raft id, unique in its shard (required)")
	f.StringVar(&o.shardID, "shard-id", "s1", "the shard cluster this node belongs to")
	f.StringVar(&o.dataDir, "data-dir", "", "directory for this node's Raft log and state (required)")
	f.StringVar(&o.httpAddr, "http", "127.0.0.1:7101", "HTTP listen address (internal API)")
	f.StringVar(&o.raftAddr, "raft", "127.0.0.1:7201", "Raft transport listen address")
	f.StringVar(&o.advertise, "advertise", "", "host peers should use for HTTP and Raft, when not the listen host (0.0.0.0 binds, NAT)")
	f.BoolVar(&o.bootstrap, "bootstrap", false, "start a new cluster with this node as its only voter (ignored once the node has state)")
	f.StringVar(&o.discover, "discover", "", "find gossip peers by DNS: dns:<name>[:port] (a headless service)")
	f.StringVar(&o.joinHTTP, "join-http", "", "HTTP addresses of members to ask to join, host:port[,…], when gossip is not enough")
	f.StringVar(&o.controlURL, "control", "", "control plane URLs to register this shard with: one or more, comma-separated, each https, e.g. https://10.0.0.5:8081")
	f.Uint64Var(&o.capacity, "capacity", 0, "most namespaces control should place on this shard (0: control's default)")
	f.BoolVar(&o.fast, "fast", false, "do not fsync the Raft log per write (see above)")
	f.DurationVar(&o.raftTimeout, "raft-timeout", 500*time.Millisecond, "Raft heartbeat and election timeout")
	settings.Range(f, "raft-timeout", "10ms", "1m")
	f.BoolVar(&o.unfair, "unfair-admission", false, "admit Raft proposals first come, first served instead of in turn per namespace (for measuring fair admission)")
	f.BoolVar(&o.effects, "replicate-effects", true, "replicate what each write stored instead of its commands, once every other member advertises a build that applies it: followers apply the leader's batch instead of running the handlers (less CPU a follower; a follower then keeps no view of workers or job event counts of its own); false: every member runs the commands")
	o.push.flags(f)
	traceShareFlag(f, &o.traceShare)
	alertIntervalFlag(f, &o.alertInterval)
	masterKeyFlag(f, &o.masterKeyFile, "without it no namespace on this node can encrypt")
	f.IntVar(&o.bulkSyncMax, "bulk-sync-max", 0, "a bulk operation by filter matching more jobs than this runs in the background (default 10000)")
	settings.Range(f, "bulk-sync-max", "0", "")
	f.Uint64Var(&o.snapshotThreshold, "snapshot-threshold", 8192, "Raft entries since the last snapshot that trigger a new one")
	f.Uint64Var(&o.trailingLogs, "trailing-logs", 10240, "Raft entries kept behind a snapshot for followers that lag a little")
	f.StringVar(&o.pprofAddr, "pprof-addr", "", "serve Go profiling (net/http/pprof) on this address")
	f.StringVar(&o.joinToken, "join-token", "", "self-hosted: join the shard of this tenant's token on first start (the shard id, certificate and tunnel address come from control)")
	settings.Secret(f, "join-token")
	f.StringVar(&o.joinControl, "control-url", "", "self-hosted: the control plane's https URLs (comma-separated) to join at, and to renew the node's certificate at (default on later starts: those it joined at)")
	f.StringVar(&o.caFile, "ca-file", "", "self-hosted: the hosted service's CA (control's and the gateways' certificates)")
	f.StringVar(&o.tunnelAddr, "tunnel", "", "self-hosted: the gateway tunnel listeners to dial, comma-separated host:port (default: every one control named at join)")
	o.local.flags(f)
	o.gossip.flags(f, "127.0.0.1:7301")
	o.tls.flags(f)
	o.log.Flags(f, "info")
	_ = cmd.MarkFlagRequired("node-id")
	_ = cmd.MarkFlagRequired("data-dir")
	settings.Install(cmd, "shard")
	cmd.AddCommand(shardGroup.commands()...)
	return cmd
}

// runShard runs the node's lifecycle: its credentials (a self-hosted
// node's own, from its join), the node itself, a self-hosted node's
// tunnels, renewal and local API, joining its group, registration with
// control, until it is removed or ctx ends. The steps of a self-hosted
// node are package selfhosted's.
func runShard(ctx context.Context, o shardOptions, out io.Writer) error {
	creds, joined, err := o.credentials(ctx)
	if err != nil {
		return err
	}
	sock, cleanup, err := o.localSocket(joined)
	if err != nil {
		return err
	}
	defer cleanup()
	if err := o.check(creds); err != nil {
		return err
	}
	sh, err := o.start(ctx, creds, sock)
	if err != nil {
		return err
	}
	defer sh.stop()
	if joined != nil {
		if err := selfhosted.DialTunnels(ctx, sh, joined.Tunnels(splitList(o.tunnelAddr)), creds, sh.log); err != nil {
			return err
		}
		if err := selfhosted.StartRenewal(ctx, o.dataDir, joined.Controls(splitList(o.joinControl)), o.caFile, creds, sh.log); err != nil {
			return err
		}
	}
	if sock != "" {
		api := o.local.api()
		api.Listeners = sh.Listeners()
		local, err := api.Start(ctx, sh.TrustBundle, creds.Identity(), sock, sh.log)
		if err != nil {
			return err
		}
		defer func() { _ = local.Stop() }() // before the node stops: deferred later, run first
		fmt.Fprintf(out, "jobbie shard: local API serving %s://%s for tenant %s's namespaces on shard %s\n", o.local.public.scheme(), local.Addr(), creds.Identity().Tenant, o.shardID)
	}
	joinedGroup := !sh.HasState() && !o.bootstrap
	if joinedGroup {
		fmt.Fprintf(out, "jobbie shard: node %s has no state; asking shard %s to add it\n", o.nodeID, o.shardID)
		if err := sh.JoinCluster(ctx, splitList(o.joinHTTP)); err != nil {
			return err
		}
	}
	if o.controlURL != "" {
		go selfhosted.Register(ctx, sh, o.controlURL, o.capacity, sh.log)
	}
	st := sh.Status()
	fmt.Fprintf(out, "jobbie shard: node %s of shard %s serving https://%s (raft %s, gossip %s)\n",
		o.nodeID, o.shardID, st.HTTPAddr, st.RaftAddr, sh.pool.Addr())
	if !selfhosted.AwaitRemoval(ctx, sh, joinedGroup) {
		fmt.Fprintln(out, "jobbie shard: shutting down")
		return nil
	}
	// Exit 0: a supervisor that restarts failures leaves it down.
	fmt.Fprintf(out, "jobbie shard: node %s was removed from shard %s; stopping. To bring it back, "+
		"`jobbie shard add` it and start it again, or empty its data directory and start it with --join.\n",
		o.nodeID, o.shardID)
	return nil
}

// credentials are the node's: a self-hosted node's from its join (on
// first start, with --join-token), whose shard id is its token's; else
// the deployment's (--tls-*).
func (o *shardOptions) credentials(ctx context.Context) (*pki.Credentials, *selfhosted.Record, error) {
	if o.joinToken == "" && !selfhosted.Joined(o.dataDir) {
		creds, err := o.tls.load(pki.RoleShard)
		return creds, nil, err
	}
	creds, joined, err := selfhosted.Open(ctx, o.dataDir, o.nodeID, selfhosted.Joining{Token: o.joinToken,
		ControlURLs: splitList(o.joinControl), CAFile: o.caFile, Tunnels: splitList(o.tunnelAddr)}, os.Stderr)
	if err != nil {
		return nil, nil, err
	}
	if o.shardIDSet && o.shardID != joined.ShardID {
		return nil, nil, fmt.Errorf("--shard-id %s: this node joined shard %s, its token's; drop the flag", o.shardID, joined.ShardID)
	}
	o.shardID = joined.ShardID
	if o.controlURL != "" {
		return nil, nil, errors.New("--control: a self-hosted shard does not register with control; it joined with its token")
	}
	return creds, joined, nil
}

// localSocket is where the node also listens for its --local-api, a
// self-hosted node's alone: none without the flag.
func (o shardOptions) localSocket(joined *selfhosted.Record) (sock string, cleanup func(), err error) {
	if o.local.addr == "" {
		return "", func() {}, nil
	}
	if joined == nil {
		return "", nil, errors.New("--local-api: only a self-hosted node (one that joined with --join-token) serves a local API; a hosted shard is reached through the gateways")
	}
	return o.local.api().Socket(o.dataDir)
}

// check refuses what the node cannot run with: credentials of another
// node, a control plane reached without TLS, a --discover that is not
// DNS (which joins the gossip peers).
func (o *shardOptions) check(creds *pki.Credentials) error {
	if id := creds.Identity(); id.Shard != o.shardID || id.Node != o.nodeID {
		return fmt.Errorf("%s is the certificate of %s, not of node %s of shard %s", o.tls.cert, id, o.nodeID, o.shardID)
	}
	if o.controlURL != "" {
		for _, u := range strings.Split(o.controlURL, ",") {
			if !strings.HasPrefix(strings.TrimSpace(u), "https://") {
				return fmt.Errorf("--control %q: the control plane is reached over TLS (https://)", u)
			}
		}
	}
	if o.discover != "" {
		if !strings.HasPrefix(o.discover, "dns:") {
			return fmt.Errorf("--discover %q: want dns:<name>[:port]", o.discover)
		}
		o.gossip.join = strings.Trim(o.gossip.join+","+o.discover, ",")
	}
	return nil
}

// shardNode is a started node, the gossip pool it is in and its log.
type shardNode struct {
	*shard.Node
	pool *gossip.Pool
	log  *slog.Logger
}

// stop hands the lead over first if this node has it, then leaves the
// pool.
func (n shardNode) stop() {
	_ = n.Stop()
	leavePool(n.pool)
}

// start joins the gossip pool and starts the node on its Raft state.
func (o *shardOptions) start(ctx context.Context, creds *pki.Credentials, sock string) (shardNode, error) {
	pushCAs, err := o.push.rootCAs()
	if err != nil {
		return shardNode{}, err
	}
	masterKey, err := loadMasterKey(o.masterKeyFile)
	if err != nil {
		return shardNode{}, err
	}
	if o.pprofAddr != "" {
		if err := servePprof(o.pprofAddr); err != nil {
			return shardNode{}, err
		}
	}
	advHTTP, advRaft, err := advertised(o.httpAddr, o.raftAddr, o.advertise)
	if err != nil {
		return shardNode{}, err
	}
	if o.advertise != "" && o.gossip.advertise == "" {
		o.gossip.advertise = o.advertise
	}
	logger := o.log.New(os.Stderr).With("shard", o.shardID, "node", o.nodeID)
	meta := gossip.Meta{Role: gossip.RoleShard, ShardID: o.shardID, NodeID: o.nodeID, HTTPAddr: advHTTP, RaftAddr: advRaft, Version: roleVersion()}
	pool, err := o.gossip.start("shard-"+o.shardID+"-"+o.nodeID, meta, logger)
	if err != nil {
		return shardNode{}, err
	}
	go o.gossip.keepJoined(ctx, pool, logger)
	go reloadOnHUP(ctx, creds, pool, o.gossip.keyFile, logger)

	sh, err := shard.New(shard.Config{
		DataDir: o.dataDir, ShardID: o.shardID, NodeID: o.nodeID, HTTPAddr: o.httpAddr, RaftAddr: o.raftAddr,
		Bootstrap: o.bootstrap, TLS: creds, Logger: logger,
		Gossip: pool, AdvertiseHTTP: advHTTP, RaftAdvertise: advRaft, Version: roleVersion(),
		Fast: o.fast, RaftTimeout: o.raftTimeout, SnapshotThreshold: o.snapshotThreshold, TrailingLogs: o.trailingLogs,
		BulkSyncMax: o.bulkSyncMax, UnfairAdmission: o.unfair, ReplicateCommands: !o.effects, SocketPath: sock,
		PushAllowPrivate: o.push.allowPrivate, PushRootCAs: pushCAs, TraceShareSystem: o.traceShare,
		AlertInterval: o.alertInterval, MasterKey: masterKey,
	})
	if err != nil {
		leavePool(pool)
		return shardNode{}, err
	}
	n := shardNode{Node: sh, pool: pool, log: logger}
	if err := sh.Start(); err != nil {
		n.stop()
		return shardNode{}, err
	}
	return n, nil
}

// advertised is the HTTP and Raft addresses peers use: the listen
// addresses, or advertise's host on the listen ports.
func advertised(httpAddr, raftAddr, advertise string) (advHTTP, advRaft string, err error) {
	if advertise == "" {
		return "", "", nil // the bound addresses
	}
	for _, a := range []struct {
		flag, addr string
		out        *string
	}{{"--http", httpAddr, &advHTTP}, {"--raft", raftAddr, &advRaft}} {
		_, port, err := net.SplitHostPort(a.addr)
		if err != nil || port == "0" {
			return "", "", fmt.Errorf("%s %q: --advertise needs a fixed port", a.flag, a.addr)
		}
		*a.out = net.JoinHostPort(advertise, port)
	}
	return advHTTP, advRaft, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// localAPIFlags are a self-hosted node's --local-api flags.
type localAPIFlags struct {
	addr       string
	maxOffline time.Duration
	public     publicTLSFlags
}

func (l *localAPIFlags) flags(f *pflag.FlagSet) {
	f.StringVar(&l.addr, "local-api", "", "self-hosted: also serve the tenant's API for this shard's namespaces here, host:port, to workers in its network (plain HTTP unless --local-api-tls-cert)")
	l.public.flags(f, "local-api-tls", "the local API")
	f.DurationVar(&l.maxOffline, "local-api-max-offline", selfhosted.DefaultMaxOffline, "self-hosted: the local API refuses keys (503 revocations_stale) once no trust bundle has come from the hosted service for this long")
}

func (l localAPIFlags) api() selfhosted.LocalAPI {
	return selfhosted.LocalAPI{Addr: l.addr, MaxOffline: l.maxOffline, CertFile: l.public.cert, KeyFile: l.public.key}
}

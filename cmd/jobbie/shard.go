package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/tunnel"
	"github.com/jobbie/jobbie/shard"
	"github.com/jobbie/jobbie/wire"
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
	gossip                          roleGossip
	tls                             roleTLS
	// A self-hosted shard's node: joins with a tenant's token, then runs
	// on what it was given (selfHosted below).
	joinToken, joinControl, caFile, tunnelAddr string
	shardIDSet                                 bool // --shard-id given
	local                                      localAPIOptions
}

// shardCmd is `jobbie shard`: one node of a shard cluster, and the
// commands that manage a cluster's members.
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
(README "Working offline").`,
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
	f.BoolVar(&o.unfair, "unfair-admission", false, "admit Raft proposals first come, first served instead of in turn per namespace (for measuring fair admission)")
	f.IntVar(&o.bulkSyncMax, "bulk-sync-max", 0, "a bulk operation by filter matching more jobs than this runs in the background (default 10000)")
	f.Uint64Var(&o.snapshotThreshold, "snapshot-threshold", 8192, "Raft entries since the last snapshot that trigger a new one")
	f.Uint64Var(&o.trailingLogs, "trailing-logs", 10240, "Raft entries kept behind a snapshot for followers that lag a little")
	f.StringVar(&o.pprofAddr, "pprof-addr", "", "serve Go profiling (net/http/pprof) on this address")
	f.StringVar(&o.joinToken, "join-token", "", "self-hosted: join the shard of this tenant's token on first start (the shard id, certificate and tunnel address come from control)")
	f.StringVar(&o.joinControl, "control-url", "", "self-hosted: the control plane's https URLs (comma-separated) to join at, and to renew the node's certificate at (default on later starts: those it joined at)")
	f.StringVar(&o.caFile, "ca-file", "", "self-hosted: the hosted service's CA (control's and the gateways' certificates)")
	f.StringVar(&o.tunnelAddr, "tunnel", "", "self-hosted: the gateway tunnel listeners to dial, comma-separated host:port (default: every one control named at join)")
	o.local.flags(f)
	o.gossip.flags(f, "127.0.0.1:7301")
	o.tls.flags(f)
	_ = cmd.MarkFlagRequired("node-id")
	_ = cmd.MarkFlagRequired("data-dir")
	cmd.AddCommand(shardMembersCmd(), shardAddCmd(), shardRemoveCmd())
	return cmd
}

func runShard(ctx context.Context, o shardOptions, out io.Writer) error {
	var creds *pki.Credentials
	var joined *joinRecord
	var err error
	if o.joinToken != "" || exists(selfHostedFile(o.dataDir, joinFile)) {
		if creds, joined, err = selfHosted(ctx, o); err != nil {
			return err
		}
		if o.shardIDSet && o.shardID != joined.ShardID {
			return fmt.Errorf("--shard-id %s: this node joined shard %s, its token's; drop the flag", o.shardID, joined.ShardID)
		}
		o.shardID = joined.ShardID
		if o.controlURL != "" {
			return errors.New("--control: a self-hosted shard does not register with control; it joined with its token")
		}
	} else if creds, err = o.tls.load(pki.RoleShard); err != nil {
		return err
	}
	var localSock string
	if o.local.addr != "" {
		if joined == nil {
			return errors.New("--local-api: only a self-hosted node (one that joined with --join-token) serves a local API; a hosted shard is reached through the gateways")
		}
		var cleanup func()
		if localSock, cleanup, err = o.local.socket(o.dataDir); err != nil {
			return err
		}
		defer cleanup()
	}
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
	if o.pprofAddr != "" {
		if err := servePprof(o.pprofAddr); err != nil {
			return err
		}
	}
	advHTTP, advRaft, err := o.advertised()
	if err != nil {
		return err
	}
	if o.advertise != "" && o.gossip.advertise == "" {
		o.gossip.advertise = o.advertise
	}
	logger := roleLogger().With("shard", o.shardID, "node", o.nodeID)
	meta := gossip.Meta{Role: gossip.RoleShard, ShardID: o.shardID, NodeID: o.nodeID, HTTPAddr: advHTTP, RaftAddr: advRaft, Version: roleVersion()}
	pool, err := o.gossip.start("shard-"+o.shardID+"-"+o.nodeID, meta, logger)
	if err != nil {
		return err
	}
	go o.gossip.keepJoined(ctx, pool, logger)
	go reloadOnHUP(ctx, creds, pool, o.gossip.keyFile, logger)

	sh, err := shard.New(shard.Config{
		DataDir: o.dataDir, ShardID: o.shardID, NodeID: o.nodeID, HTTPAddr: o.httpAddr, RaftAddr: o.raftAddr,
		Bootstrap: o.bootstrap, TLS: creds, Logger: logger,
		Gossip: pool, AdvertiseHTTP: advHTTP, RaftAdvertise: advRaft, Version: roleVersion(),
		Fast: o.fast, RaftTimeout: o.raftTimeout, SnapshotThreshold: o.snapshotThreshold, TrailingLogs: o.trailingLogs,
		BulkSyncMax: o.bulkSyncMax, UnfairAdmission: o.unfair, SocketPath: localSock,
	})
	if err != nil {
		leavePool(pool)
		return err
	}
	defer func() {
		_ = sh.Stop() // hands the lead over first if this node has it
		leavePool(pool)
	}()
	if err := sh.Start(); err != nil {
		return err
	}
	if joined != nil {
		if err := runTunnel(ctx, sh, o, &joined.JoinResponse, creds, logger); err != nil {
			return err
		}
		if err := startRenewal(ctx, o, joined, creds, logger); err != nil {
			return err
		}
	}
	if localSock != "" {
		local, err := o.local.start(ctx, sh, creds.Identity(), localSock, logger)
		if err != nil {
			return err
		}
		defer func() { _ = local.Stop() }() // before the node stops: deferred later, run first
		fmt.Fprintf(out, "jobbie shard: local API serving %s://%s for tenant %s's namespaces on shard %s\n", o.local.public.scheme(), local.Addr(), creds.Identity().Tenant, o.shardID)
	}
	joinedGroup := false
	if !sh.HasState() && !o.bootstrap {
		joinedGroup = true
		fmt.Fprintf(out, "jobbie shard: node %s has no state; asking shard %s to add it\n", o.nodeID, o.shardID)
		if err := sh.JoinCluster(ctx, splitList(o.joinHTTP)); err != nil {
			return err
		}
	}
	if o.controlURL != "" {
		go registerWithControl(ctx, sh, o, logger)
	}
	changes, unsubscribe := sh.Subscribe()
	defer unsubscribe()
	st := sh.Status()
	fmt.Fprintf(out, "jobbie shard: node %s of shard %s serving https://%s (raft %s, gossip %s)\n",
		o.nodeID, o.shardID, st.HTTPAddr, st.RaftAddr, pool.Addr())
	removed := removalWatch(sh, joinedGroup)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(out, "jobbie shard: shutting down")
			return nil
		case <-changes:
		case <-tick.C:
		}
		if removed() {
			// Exit 0: a supervisor that restarts failures leaves it down.
			fmt.Fprintf(out, "jobbie shard: node %s was removed from shard %s; stopping. To bring it back, "+
				"`jobbie shard add` it and start it again, or empty its data directory and start it with --join.\n",
				o.nodeID, o.shardID)
			return nil
		}
	}
}

// removalWatch returns a check that is true once the cluster removed this
// node: it was a member of its latest configuration (or was added at
// start) and no longer is; or Raft stopped itself (a leader that applied
// its own removal); or, having known no leader for a while, the group's
// leader lists it no more (Raft may never send a removed member the entry
// that removes it). A node that restarts after being removed and added
// again starts outside the configuration it has, so only leaving it
// counts.
func removalWatch(sh *shard.Node, joined bool) func() bool {
	was := joined
	var leaderless time.Time // since when this node knows no leader
	return func() bool {
		member, known, stopped := sh.Membership()
		if member {
			was = true
		}
		if stopped || (was && known && !member) {
			return true
		}
		if sh.Status().LeaderID != "" {
			leaderless = time.Time{}
			return false
		}
		if leaderless.IsZero() {
			leaderless = time.Now()
		}
		return time.Since(leaderless) >= askPeersAfter && sh.RemovedByGroup()
	}
}

// askPeersAfter is how long a member goes without a leader before it asks
// the group's leader whether it was removed: longer than an election.
const askPeersAfter = 3 * time.Second

// advertised is the HTTP and Raft addresses peers use: the listen
// addresses, or --advertise's host on the listen ports.
func (o shardOptions) advertised() (httpAddr, raftAddr string, err error) {
	if o.advertise == "" {
		return "", "", nil // the bound addresses
	}
	for _, a := range []struct {
		flag, addr string
		out        *string
	}{{"--http", o.httpAddr, &httpAddr}, {"--raft", o.raftAddr, &raftAddr}} {
		_, port, err := net.SplitHostPort(a.addr)
		if err != nil || port == "0" {
			return "", "", fmt.Errorf("%s %q: --advertise needs a fixed port", a.flag, a.addr)
		}
		*a.out = net.JoinHostPort(o.advertise, port)
	}
	return httpAddr, raftAddr, nil
}

// registerWithControl keeps the control plane's record of this shard
// current: the leader registers the members it knows on election, when
// membership changes, and every minute.
func registerWithControl(ctx context.Context, sh *shard.Node, o shardOptions, log *slog.Logger) {
	changes, cancel := sh.Subscribe()
	defer cancel()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	last := ""
	for {
		if sh.IsLeader() {
			sig, err := sh.Register(ctx, o.controlURL, o.capacity, last)
			switch {
			case err != nil && ctx.Err() == nil:
				log.Warn("shard: register with control", "control", o.controlURL, "err", err)
				last = ""
			case err == nil:
				last = sig
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changes:
		case <-t.C:
			last = "" // refresh even when nothing changed
		case <-time.After(5 * time.Second): // members' HTTP addresses arrive by gossip
		}
	}
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

// A self-hosted node keeps what joining gave it in <data-dir>/selfhosted:
// its key and certificate, the CAs it trusts (the self-hosted CA for its
// peers, the hosted CA of --ca-file for control and the gateways), and
// who it is and where to dial. A restart reuses them: no token again.
const (
	joinFile     = "join.json"
	nodeCertFile = "node.crt"
	nodeKeyFile  = "node.key"
	trustFile    = "ca.crt"
)

func selfHostedFile(dataDir, name string) string { return filepath.Join(dataDir, "selfhosted", name) }

// selfHosted joins on first start, or loads what an earlier join stored.
func selfHosted(ctx context.Context, o shardOptions) (*pki.Credentials, *joinRecord, error) {
	file := func(n string) string { return selfHostedFile(o.dataDir, n) }
	if !exists(file(joinFile)) {
		if err := joinShard(ctx, o); err != nil {
			return nil, nil, err
		}
	} else if o.joinToken != "" {
		fmt.Fprintln(os.Stderr, "jobbie shard: this node joined before; --join-token is not used again")
	}
	var j joinRecord
	b, err := os.ReadFile(file(joinFile))
	if err == nil {
		err = json.Unmarshal(b, &j)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("self-hosted join record: %w", err)
	}
	if j.NodeID != o.nodeID {
		return nil, nil, fmt.Errorf("this data directory is node %s of shard %s, not node %s", j.NodeID, j.ShardID, o.nodeID)
	}
	creds, err := pki.LoadCredentials(file(nodeCertFile), file(nodeKeyFile), file(trustFile))
	if err != nil {
		return nil, nil, err
	}
	return creds, &j, nil
}

// joinShard trades the token for a certificate of a key made here (the
// key never leaves the node) and stores them, 0600, with the control
// URLs it joined at, where it renews the certificate later.
func joinShard(ctx context.Context, o shardOptions) error {
	controls := splitList(o.joinControl)
	if o.joinToken == "" || len(controls) == 0 || o.caFile == "" {
		return errors.New("joining needs --join-token, --control-url https://… and --ca-file (the hosted service's CA)")
	}
	for _, u := range controls {
		if !strings.HasPrefix(u, "https://") {
			return fmt.Errorf("--control-url %q: control is reached over TLS (https://)", u)
		}
	}
	hostedCA, err := os.ReadFile(o.caFile)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(hostedCA) {
		return fmt.Errorf("--ca-file %s holds no certificate", o.caFile)
	}
	// The identity is control's to decide: the request names none.
	csr, key, err := pki.NewCSR(pki.Identity{}, nil)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(wire.JoinRequest{Token: o.joinToken, NodeID: o.nodeID, CSR: string(csr)})
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS13}}}
	var j wire.JoinResponse
	if err := postControl(ctx, hc, controls, "/control/v1/join", body, http.StatusCreated, &j); err != nil {
		return fmt.Errorf("join: %w", err)
	}
	if o.tunnelAddr != "" {
		j.TunnelURLs = splitList(o.tunnelAddr)
	}
	record, _ := json.Marshal(joinRecord{JoinResponse: wire.JoinResponse{ShardID: j.ShardID, NodeID: j.NodeID, TenantID: j.TenantID,
		TunnelURLs: j.TunnelURLs}, ControlURLs: controls})
	if err := os.MkdirAll(filepath.Dir(selfHostedFile(o.dataDir, joinFile)), 0o700); err != nil {
		return err
	}
	// The join record last: its presence says the rest is there.
	for _, f := range []struct {
		name string
		data []byte
	}{{nodeKeyFile, key}, {nodeCertFile, []byte(j.Certificate)}, {trustFile, append([]byte(j.CA+"\n"), hostedCA...)}, {joinFile, record}} {
		if err := writeSecretFile(selfHostedFile(o.dataDir, f.name), string(f.data)); err != nil {
			return err
		}
	}
	return nil
}

// startRenewal keeps the node's certificate renewed at the control URLs
// of --control-url, else those it joined at.
func startRenewal(ctx context.Context, o shardOptions, j *joinRecord, creds *pki.Credentials, log *slog.Logger) error {
	controls := splitList(o.joinControl)
	if len(controls) == 0 {
		controls = j.ControlURLs
	}
	if len(controls) == 0 {
		log.Warn("certificate renewal is off: this node joined before its join record kept control's URL; start it with --control-url",
			"not_after", creds.NotAfter())
		return nil
	}
	var hostedCA []byte
	if o.caFile != "" {
		b, err := os.ReadFile(o.caFile)
		if err != nil {
			return err
		}
		hostedCA = b
	}
	r, err := newRenewer(o.dataDir, controls, hostedCA, creds, log)
	if err != nil {
		return fmt.Errorf("certificate renewal: %w", err)
	}
	go r.run(ctx)
	return nil
}

// runTunnel dials every hosted gateway tunnel listener it was given and
// serves the node's API on each tunnel, reconnecting with backoff until
// ctx ends. The node listens for no one outside its own cluster. A
// gateway serves the shard's namespaces only over a tunnel of its own, so
// behind one load-balanced address a node is served by the gateway that
// address led it to; one address per gateway reaches them all.
func runTunnel(ctx context.Context, sh *shard.Node, o shardOptions, j *wire.JoinResponse, creds *pki.Credentials, log *slog.Logger) error {
	addrs := splitList(o.tunnelAddr)
	if len(addrs) == 0 {
		addrs = j.TunnelURLs
	}
	if len(addrs) == 0 {
		return errors.New("no tunnel address: control named none at join; pass --tunnel host:port")
	}
	for _, addr := range addrs {
		agent, err := tunnel.NewAgent(tunnel.AgentConfig{Addr: addr, TLS: creds, Logger: log})
		if err != nil {
			return err
		}
		sh.Serve(agent.Listener())
		go func() { _ = agent.Run(ctx) }()
	}
	return nil
}

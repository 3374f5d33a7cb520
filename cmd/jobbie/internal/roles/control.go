package roles

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/rolelog"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/settings"
	"github.com/jobbie/jobbie/control"
	"github.com/jobbie/jobbie/internal/gossip"
	"github.com/jobbie/jobbie/internal/pki"
)

type controlOptions struct {
	dataDir, httpAddr, raftAddr, nodeID string
	advertise, joinHTTP                 string
	operatorKeyFile                     string
	snapshotThreshold, trailingLogs     uint64
	pprofAddr                           string
	shards                              []string
	usagePull                           time.Duration
	backupMinInterval                   time.Duration
	gossip                              roleGossip
	tls                                 roleTLS
	backups                             backupStoreFlags
	selfHostedCADir                     string
	tunnelURLs                          []string
	selfHostedCertValidity              time.Duration
	log                                 rolelog.Options
}

// controlCmd is `jobbie control`: the control plane alone, for running
// the roles apart (docs/operate/running-the-roles.md), and the commands
// that manage its group's members; more are other commands to stand
// under it.
func controlCmd(more ...*cobra.Command) *cobra.Command {
	var o controlOptions
	cmd := &cobra.Command{
		Use:   "control",
		Short: "Run the control plane (tenants, placement, keys, the shard registry)",
		Long: `control runs the control plane: tenants and their namespaces, where each
namespace is placed, API keys and the keys that sign them, and the registry
of shard clusters. Shard clusters register themselves (POST
/control/v1/shards/register, each for its own shard id as its certificate
shows); new namespaces go to the least loaded one. Gateways ask it for
placements, keys and revocations. Internal callers prove who they are with
certificates from the deployment's CA (docs/trust.md); operators use
operator keys. SIGHUP rereads the certificate and the gossip keys.

It joins the gossip pool as role "control". With --operator-key-file it
writes an operator key there on first start (the file must not exist yet);
in a group, the node that starts it does, and nodes that join do not.

Control runs as a Raft group of 1, 3 or 5 nodes, like a shard cluster.
The first node of a new group starts without --join-http and bootstraps
it; the others start with --join-http (HTTP addresses of running control
nodes) and are added as voters, catching up from the leader's log or a
snapshot. A node that restarts resumes from its data directory. Raft is
mutual TLS between control certificates. Any node answers: writes and
reads that must be current go to the leader; while there is none they get
503 no_leader with Retry-After. Only the leader pulls usage and freezes
invoices, from the replicated cursor, so a new leader resumes exactly
where the last one stopped.

The leader also takes and restores namespace backups and runs backup
policies. It keeps backups in --backup-dir (default <data-dir>/backups) or
an S3-compatible bucket (--backup-s3-*, keys read from files). A directory
is the node's own: in a group of several nodes use S3 or a directory every
node shares, or a new leader cannot read what the last one stored.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runControl(ctx, o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dataDir, "data-dir", "", "directory for the control plane's Raft log and state (required)")
	f.StringVar(&o.httpAddr, "http", "127.0.0.1:8081", "HTTP listen address (operator and internal API)")
	f.StringVar(&o.raftAddr, "raft", "127.0.0.1:0", "Raft transport address")
	f.StringVar(&o.nodeID, "node-id", "control1", "this node's Raft id, also its gossip name (control-<id>)")
	f.StringVar(&o.advertise, "advertise", "", "host other nodes should use for HTTP and Raft, when not the listen host (0.0.0.0 binds, NAT)")
	f.StringVar(&o.joinHTTP, "join-http", "", "HTTP addresses of control nodes to ask to add this node, host:port[,…]; without it a node with no state starts a new group")
	f.Uint64Var(&o.snapshotThreshold, "snapshot-threshold", 8192, "Raft entries since the last snapshot that trigger a new one")
	f.Uint64Var(&o.trailingLogs, "trailing-logs", 10240, "Raft entries kept behind a snapshot for followers that lag a little")
	f.StringVar(&o.operatorKeyFile, "operator-key-file", "", "write an operator key to this file if it does not exist")
	f.StringVar(&o.pprofAddr, "pprof-addr", "", "serve Go profiling (net/http/pprof) on this address")
	f.StringArrayVar(&o.shards, "shard", nil, "a static shard cluster as id=address (repeatable); shards may also register themselves")
	f.DurationVar(&o.usagePull, "usage-pull-interval", control.DefaultPullInterval,
		"how often the leader pulls every shard's usage into the metering ledger; usage shows within this plus one pull's requests")
	settings.Range(f, "usage-pull-interval", positive, "")
	f.DurationVar(&o.backupMinInterval, "backup-policy-min-interval", control.DefaultBackupPolicyMinInterval,
		"the shortest time a backup policy's cron may leave between two runs (0: any)")
	settings.Range(f, "backup-policy-min-interval", "0s", "")
	f.StringVar(&o.selfHostedCADir, "selfhosted-ca-dir", "",
		"directory with ca.crt and ca.key of the CA that signs self-hosted shards' certificates when they join with a tenant's token (its own CA, never the deployment's); without it joining answers 503")
	selfHostedCertValidityFlag(f, &o.selfHostedCertValidity)
	f.StringArrayVar(&o.tunnelURLs, "tunnel-url", nil, "a gateway tunnel listener (host:port) joined self-hosted shard nodes dial (repeatable)")
	o.gossip.flags(f, "127.0.0.1:7946")
	o.tls.flags(f)
	o.backups.flags(f, "<data-dir>/backups")
	o.log.Flags(f, "info")
	_ = cmd.MarkFlagRequired("data-dir")
	settings.Install(cmd, "control")
	cmd.AddCommand(controlGroup.commands()...)
	cmd.AddCommand(more...)
	return cmd
}

func runControl(ctx context.Context, o controlOptions, out io.Writer) error {
	if o.pprofAddr != "" {
		if err := servePprof(o.pprofAddr); err != nil {
			return err
		}
	}
	creds, err := o.tls.load(pki.RoleControl)
	if err != nil {
		return err
	}
	// A node's Raft id is the one its certificate names, as a shard's.
	if id := creds.Identity(); id.Node != o.nodeID {
		return fmt.Errorf("%s is the certificate of %s, not of control node %s", o.tls.cert, id, o.nodeID)
	}
	shards, err := parseStaticShards(o.shards)
	if err != nil {
		return err
	}
	advHTTP, advRaft, err := advertised(o.httpAddr, o.raftAddr, o.advertise)
	if err != nil {
		return err
	}
	if o.advertise != "" && o.gossip.advertise == "" {
		o.gossip.advertise = o.advertise
	}
	logger := o.log.New(os.Stderr).With("node", o.nodeID)
	pool, err := o.gossip.start("control-"+o.nodeID, gossip.Meta{Role: gossip.RoleControl, NodeID: o.nodeID, Version: roleVersion()}, logger)
	if err != nil {
		return err
	}
	defer leavePool(pool)
	go o.gossip.keepJoined(ctx, pool, logger)
	go reloadOnHUP(ctx, creds, pool, o.gossip.keyFile, logger)

	store, err := o.backups.store(filepath.Join(o.dataDir, "backups"))
	if err != nil {
		return err
	}
	var selfHostedCA *pki.CA
	if o.selfHostedCADir != "" {
		if selfHostedCA, err = pki.LoadCA(filepath.Join(o.selfHostedCADir, "ca.crt"), filepath.Join(o.selfHostedCADir, "ca.key")); err != nil {
			return fmt.Errorf("--selfhosted-ca-dir: %w", err)
		}
	}
	ctl, err := control.New(control.Config{
		SelfHostedCA: selfHostedCA, TunnelURLs: o.tunnelURLs, SelfHostedCertValidity: o.selfHostedCertValidity,
		DataDir: o.dataDir, HTTPAddr: o.httpAddr, RaftAddr: o.raftAddr, NodeID: o.nodeID, BackupStore: store,
		AdvertiseHTTP: advHTTP, RaftAdvertise: advRaft, Join: splitList(o.joinHTTP),
		SnapshotThreshold: o.snapshotThreshold, TrailingLogs: o.trailingLogs,
		TLS: creds, Shards: shards, Gossip: pool, Logger: logger, PullInterval: o.usagePull,
		BackupPolicyMinInterval: o.backupMinInterval,
	})
	if err != nil {
		return err
	}
	// Advertise the HTTP address before Start: a joining node's peers
	// and followers' forwards find nodes by it.
	go advertiseControl(ctx, ctl, pool, o.nodeID, logger)
	if err := ctl.Start(ctx); err != nil {
		return err
	}
	defer ctl.Stop()
	// Only the leader proposes: a node alone in its group (the one that
	// starts it) leads once Start returns and writes the key; a node that
	// joined a group leaves it to that one.
	if o.operatorKeyFile != "" && !exists(o.operatorKeyFile) && !ctl.IsLeader() {
		logger.Info("control: not writing --operator-key-file: this node joined a group; the node that started it writes the operator key", "file", o.operatorKeyFile)
	} else if o.operatorKeyFile != "" && !exists(o.operatorKeyFile) {
		key, err := ctl.IssueOperatorKey(ctx, "operator")
		if err != nil {
			return fmt.Errorf("issue operator key: %w", err)
		}
		if err := writeSecretFile(o.operatorKeyFile, key); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "jobbie control: serving https://%s (raft %s, gossip %s)\n", ctl.Addr(), ctl.RaftAddr(), pool.Addr())
	// A node removed from the group stops (exit 0, so a supervisor that
	// restarts failures leaves it down): once it was a member of the
	// configuration it knows and no longer is, or Raft stopped itself (a
	// leader that applied its own removal).
	was := false
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(out, "jobbie control: shutting down")
			return nil
		case <-tick.C:
		}
		member, known, stopped := ctl.Membership()
		was = was || member
		if stopped || (was && known && !member) {
			fmt.Fprintf(out, "jobbie control: node %s was removed from the control group; stopping. To bring it back, "+
				"`jobbie control add` it and start it again, or empty its data directory and start it with --join-http.\n", o.nodeID)
			return nil
		}
	}
}

// advertiseControl keeps this node's gossip metadata in step with its
// Raft state. Leadership changes rarely and nothing routes by it in a
// hurry, so a quarter-second look is enough.
func advertiseControl(ctx context.Context, ctl *control.Server, pool *gossip.Pool, nodeID string, log *slog.Logger) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		leader := ctl.IsLeader()
		err := pool.UpdateMeta(func(m *gossip.Meta) {
			m.HTTPAddr, m.RaftAddr = ctl.AdvertisedHTTP(), ctl.RaftAddr()
			m.RaftState, m.Leader, m.LeaderHTTP = gossip.StateFollower, "", ""
			if leader {
				m.RaftState, m.Leader, m.LeaderHTTP = gossip.StateLeader, nodeID, ctl.AdvertisedHTTP()
			}
		})
		if err != nil && ctx.Err() == nil {
			log.Warn("control: gossip metadata update", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func parseStaticShards(specs []string) ([]control.ShardInfo, error) {
	var out []control.ShardInfo
	for _, s := range specs {
		id, addr, ok := strings.Cut(s, "=")
		if !ok || id == "" || addr == "" {
			return nil, fmt.Errorf("--shard %q: want id=address, e.g. s1=https://10.0.0.5:8082", s)
		}
		out = append(out, control.ShardInfo{ID: id, Addr: addr})
	}
	return out, nil
}

// selfHostedCertValidityFlag is --selfhosted-cert-validity, of control and
// dev: how long a self-hosted node's certificate lasts.
func selfHostedCertValidityFlag(f *pflag.FlagSet, v *time.Duration) {
	f.DurationVar(v, "selfhosted-cert-validity", control.DefaultSelfHostedCertValidity,
		fmt.Sprintf("how long a self-hosted shard node's certificate lasts from its join or renewal; nodes renew with a third left (at least %s; short ones are for tests)",
			control.MinSelfHostedCertValidity))
}

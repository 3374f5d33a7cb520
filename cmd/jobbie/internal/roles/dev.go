package roles

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/rolelog"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/settings"
	"github.com/jobbie/jobbie/control"
	"github.com/jobbie/jobbie/gateway"
	"github.com/jobbie/jobbie/internal/atomicfile"
	"github.com/jobbie/jobbie/internal/listen"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/shard"
	"github.com/jobbie/jobbie/tenancy"
)

type devOptions struct {
	dataDir       string
	addr          string
	controlAddr   string
	shardAddr     string
	pprofAddr     string
	metricsAddr   string
	consoleDir    string
	tunnelAddr    string
	grpcAddr      string
	grpcPublicURL string
	grpcKeepAlive time.Duration
	scalerPoll    time.Duration // --grpc-scaler-poll
	trustPush     time.Duration // --trust-push-interval
	certLife      time.Duration // --selfhosted-cert-validity
	bulkSyncMax   int
	unfair        bool
	effects       bool // --replicate-effects (default true), for every shard node of --cluster
	push          pushFlags
	sso           ssoFlags
	traceShare    bool // --trace-share-system
	masterKeyFile string
	alertInterval time.Duration
	shards        int // shard clusters; more than one, or replicas > 1, runs every role as a process
	replicas      int // nodes per shard cluster
	backups       backupStoreFlags
	limits        gatewayLimits // the gateway's (single process only)
	log           rolelog.Options
	logLevelSet   bool // --log-level given (flag, variable or file): a cluster's processes get it too
}

func devCmd() *cobra.Command {
	var o devOptions
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run control, gateway and one shard in one process on a local data directory",
		Long: `dev runs the whole service in one process: a control plane, a gateway and a
single-node shard, each on real Raft and Pebble under --data-dir. On first
start it creates tenant "default" with namespace "default" and writes an
owner key and an operator key into the data directory. A restart keeps
all state.

The processes trust each other through a CA of their own in
<data-dir>/pki: every internal channel is mutual TLS. An operator
certificate there (operator.crt, operator.key, ca.crt) is for tools that
talk to shards and scrape metrics.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			o.logLevelSet = cmd.Flags().Changed("log-level")
			if (o.shards > 1 || o.replicas > 1) && o.backups != (backupStoreFlags{s3TLS: o.backups.s3TLS}) {
				return fmt.Errorf("the --backup-* flags are for the single-process dev: a multi-process cluster's control nodes share <data-dir>/backups")
			}
			if o.shards > 1 || o.replicas > 1 {
				return runDevCluster(ctx, o, cmd.OutOrStdout())
			}
			return runDev(ctx, o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dataDir, "data-dir", "./jobbie-data", "directory for all state and key files")
	f.StringVar(&o.addr, "addr", "127.0.0.1:8080", "gateway listen address (the public API)")
	f.StringVar(&o.controlAddr, "control-addr", "127.0.0.1:8081", "control plane listen address")
	f.StringVar(&o.shardAddr, "shard-addr", "127.0.0.1:8082", "shard listen address (internal API)")
	f.BoolVar(&o.unfair, "unfair-admission", false, "admit Raft proposals first come, first served instead of in turn per namespace (for measuring fair admission; single process only)")
	o.push.flags(f)
	o.sso.flags(f)
	traceShareFlag(f, &o.traceShare)
	alertIntervalFlag(f, &o.alertInterval)
	masterKeyFlag(f, &o.masterKeyFile, "default: encryption-master.key in the data directory, made on first start")
	f.IntVar(&o.bulkSyncMax, "bulk-sync-max", 0, "a bulk operation by filter matching more jobs than this runs in the background (default 10000; single process only)")
	f.StringVar(&o.consoleDir, "console-dir", "", "serve the console's front end from this directory (a build of gateway/console) instead of the embedded one")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve the gateway's /metrics here, over TLS to the operator certificate in <data-dir>/pki (single process only)")
	f.StringVar(&o.pprofAddr, "pprof-addr", "", "serve Go profiling (net/http/pprof) on this address, e.g. 127.0.0.1:6060; in a multi-process cluster every process serves its own, listed in cluster.json")
	f.BoolVar(&o.effects, "replicate-effects", true, "replicate what each write stored instead of its commands, once every other member advertises a build that applies it: followers apply the leader's batch instead of running the handlers (less CPU a follower; a follower then keeps no view of workers or job event counts of its own); false: every member runs the commands")
	f.IntVar(&o.shards, "shards", 1, "shard clusters; with more than one, or --replicas above 1, every role runs as its own process")
	f.IntVar(&o.replicas, "replicas", 1, "Raft nodes per shard cluster (3 or 5 survive the loss of 1 or 2)")
	settings.Range(f, "shards", "1", "16")
	settings.Range(f, "replicas", "1", "7")
	settings.Range(f, "bulk-sync-max", "0", "")
	grpcAddrFlag(f, &o.grpcAddr, &o.grpcPublicURL, &o.grpcKeepAlive, &o.scalerPoll, "h2c")
	f.StringVar(&o.tunnelAddr, "tunnel-addr", "", "listen here for self-hosted shards' tunnels, host:port (their CA is <data-dir>/pki/selfhosted/ca.crt)")
	trustPushFlag(f, &o.trustPush)
	selfHostedCertValidityFlag(f, &o.certLife)
	o.backups.flags(f, "<data-dir>/backups")
	o.limits.flags(f)
	o.log.Flags(f, "warn")
	settings.Install(cmd, "dev")
	return cmd
}

// devFiles are the files dev keeps in its data directory.
type devFiles struct{ owner, operator, pki string }

func filesIn(dir string) devFiles {
	return devFiles{
		owner:    filepath.Join(dir, "owner.key"),
		operator: filepath.Join(dir, "operator.key"),
		pki:      filepath.Join(dir, "pki"),
	}
}

// devOperator is the identity of the certificate dev hands to tools.
var devOperator = pki.Identity{Role: pki.RoleOperator, Node: "dev"}

// privateDataDir makes dir, or takes the one that exists, readable by its
// owner only: it holds the CA's key and the owner's API key, and MkdirAll
// leaves an existing directory's mode as it was (0755 from a mkdir).
func privateDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if mode := fi.Mode().Perm(); mode&0o077 != 0 {
		if err := os.Chmod(dir, mode&^0o077); err != nil {
			return fmt.Errorf("make the data directory %s private (mode %#o): %w", dir, mode, err)
		}
	}
	return nil
}

func runDev(ctx context.Context, o devOptions, out interface{ Write([]byte) (int, error) }) error {
	if err := privateDataDir(o.dataDir); err != nil {
		return err
	}
	if o.pprofAddr != "" {
		if err := servePprof(o.pprofAddr); err != nil {
			return err
		}
	}
	files := filesIn(o.dataDir)
	ca, err := openDevPKI(o.dataDir)
	if err != nil {
		return err
	}
	if _, err := ca.files("operator", devOperator); err != nil {
		return err
	}
	shardCreds, err := ca.creds(pki.Identity{Role: pki.RoleShard, Shard: "s1", Node: "s1-n1"})
	if err != nil {
		return err
	}
	controlCreds, err := ca.creds(pki.Identity{Role: pki.RoleControl, Node: "control1"})
	if err != nil {
		return err
	}
	gatewayCreds, err := ca.creds(pki.Identity{Role: pki.RoleGateway, Node: "dev"})
	if err != nil {
		return err
	}
	logger := o.log.New(os.Stderr)
	// One process, one readiness: every role's /readyz fails while any
	// of the process's listeners cannot accept.
	listeners := listen.NewGroup()

	pushCAs, err := o.push.rootCAs()
	if err != nil {
		return err
	}
	masterKey, err := devMasterKey(o.masterKeyFile, o.dataDir)
	if err != nil {
		return err
	}
	sock := shardSocket(o.dataDir)
	sh, err := shard.New(shard.Config{
		DataDir: filepath.Join(o.dataDir, "shard-s1"), ShardID: "s1", NodeID: "s1-n1",
		HTTPAddr: o.shardAddr, SocketPath: sock, Bootstrap: true, TLS: shardCreds, Logger: logger,
		BulkSyncMax: o.bulkSyncMax, UnfairAdmission: o.unfair, ReplicateCommands: !o.effects, Listeners: listeners,
		PushAllowPrivate: o.push.allowPrivate, PushRootCAs: pushCAs, TraceShareSystem: o.traceShare,
		AlertInterval: o.alertInterval, MasterKey: masterKey,
	})
	if err != nil {
		return err
	}
	defer sh.Stop()
	if err := sh.Start(); err != nil {
		return err
	}
	if err := waitFor(ctx, sh.WaitLeader); err != nil {
		return fmt.Errorf("shard: %w", err)
	}

	store, err := o.backups.store(filepath.Join(o.dataDir, "backups"))
	if err != nil {
		return err
	}
	selfHostedCA, err := openSelfHostedCA(o.dataDir)
	if err != nil {
		return err
	}
	ctl, err := control.New(control.Config{
		DataDir: filepath.Join(o.dataDir, "control"), HTTPAddr: o.controlAddr, TLS: controlCreds, BackupStore: store,
		SelfHostedCA: selfHostedCA, TunnelURLs: splitList(o.tunnelAddr), SelfHostedCertValidity: o.certLife,
		// The gateway reaches the shard on its socket; control reads its
		// usage over TLS, as the socket is the local gateway's alone.
		Shards: []control.ShardInfo{{ID: "s1", Addr: shardAddrFor(sh.Addr(), sock), UsageAddrs: []string{sh.Addr()}}}, Logger: logger,
		Listeners: listeners,
	})
	if err != nil {
		return err
	}
	if err := ctl.Start(ctx); err != nil {
		return fmt.Errorf("control: %w", err)
	}
	defer ctl.Stop()
	if err := bootstrapKeys(ctx, ctl, files); err != nil {
		return err
	}

	gwCfg := gateway.Config{Addr: o.addr, ControlURL: "https://" + ctl.Addr(), TLS: gatewayCreds,
		MetricsAddr: o.metricsAddr, ConsoleDir: o.consoleDir, Logger: logger, Listeners: listeners, GRPCAddr: o.grpcAddr, GRPCPublicURL: o.grpcPublicURL, GRPCKeepAlive: o.grpcKeepAlive, GRPCScalerPoll: o.scalerPoll,
		TraceShareSystem: o.traceShare}
	o.limits.apply(&gwCfg)
	if err := o.sso.apply(&gwCfg); err != nil {
		return err
	}
	if o.tunnelAddr != "" {
		gwCfg.TunnelAddr, gwCfg.SelfHostedCA = o.tunnelAddr, selfHostedCA.CertPEM()
		gwCfg.TrustPushInterval = o.trustPush
	}
	gw, err := gateway.New(gwCfg)
	if err != nil {
		return err
	}
	if err := gw.Start(ctx); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	defer gw.Stop()
	select {
	case <-gw.Ready():
	case <-ctx.Done():
		return nil
	}
	printWelcome(out, files, gw.Addr(), ctl.Addr(), sh.Addr(), gw.MetricsAddr(), gw.GRPCAddr())
	<-ctx.Done()
	fmt.Fprintln(out, "jobbie dev: shutting down")
	return nil
}

// bootstrapKeys creates tenant "default" and the key files on first start.
func bootstrapKeys(ctx context.Context, ctl *control.Server, files devFiles) error {
	if !exists(files.operator) {
		key, err := ctl.IssueOperatorKey(ctx, "dev operator")
		if err != nil {
			return fmt.Errorf("issue operator key: %w", err)
		}
		if err := writeSecretFile(files.operator, key); err != nil {
			return err
		}
	}
	if exists(files.owner) {
		return nil
	}
	var ownerKey string
	t, err := ctl.TenantByName(ctx, "default")
	if err == nil {
		// The tenant exists but its key file is gone: mint a new owner key.
		k, err := ctl.CreateKey(ctx, t.ID, control.KeyRequest{Name: "dev owner", Role: string(tenancy.RoleOwner), Namespaces: []string{tenancy.AllNamespaces}})
		if err != nil {
			return fmt.Errorf("create owner key: %w", err)
		}
		ownerKey = k.Key
	} else {
		res, err := ctl.CreateTenant(ctx, "default")
		if err != nil {
			return fmt.Errorf("create tenant default: %w", err)
		}
		ownerKey = res.OwnerKey
	}
	return writeSecretFile(files.owner, ownerKey)
}

func printWelcome(out interface{ Write([]byte) (int, error) }, files devFiles, gw, ctl, sh, metrics, grpc string) {
	fmt.Fprintf(out, `Jobbie is running.
  gateway (public API):  http://%[1]s
  console:               http://%[1]s/console/ (sign in with the owner key)
  control plane:         https://%[2]s
  shard s1 (internal):   https://%[3]s
  owner key:             %[4]s
  operator key:          %[5]s
  certificates:          %[6]s (ca.crt; operator.crt and operator.key for tools)
`, gw, ctl, sh, files.owner, files.operator, files.pki)
	if metrics != "" {
		fmt.Fprintf(out, "  gateway metrics:       https://%s/metrics\n", metrics)
	}
	if grpc != "" {
		fmt.Fprintf(out, "  gRPC and Connect:      http://%s (h2c; docs/api/grpc.md)\n", grpc)
	}
	fmt.Fprintf(out, `
Try it:
  curl -s -X POST http://%s/api/v1/enqueue \
    -H "Authorization: Bearer $(cat %s)" -H 'Content-Type: application/json' \
    -d '{"queue":"emails.send","payload":{"to":"user@example.com"}}'
`, gw, files.owner)
}

// shardSocket is where the shard also listens, so the gateway in the same
// process reaches it over a Unix socket rather than loopback TCP. Empty
// when the path would be too long for a socket address.
func shardSocket(dataDir string) string {
	abs, err := filepath.Abs(filepath.Join(dataDir, "shard-s1.sock"))
	if err != nil || len(abs) > 100 {
		return ""
	}
	return abs
}

func shardAddrFor(tcp, sock string) string {
	if sock != "" {
		return "unix:" + sock
	}
	return "https://" + tcp
}

// waitFor runs a wait-until-ready function with a deadline.
func waitFor(ctx context.Context, wait func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return wait(ctx)
}

// writeSecretFile writes atomically and durably with owner-only
// permissions.
func writeSecretFile(path, content string) error {
	return atomicfile.Write(path, []byte(content+"\n"), 0o600)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

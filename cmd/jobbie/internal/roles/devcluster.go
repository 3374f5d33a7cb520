package roles

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jobbie/jobbie/internal/pki"
)

// `jobbie dev --shards N --replicas R` runs every role as its own process
// on loopback: a control plane (of R nodes, up to 5, when R > 1), a
// gateway and N shard clusters of R nodes,
// each `jobbie control|gateway|shard` started from this binary. It keeps
// <data-dir>/cluster.json current (role, ids, pid, addresses, status) and
// restarts a process that dies, so anyone can kill a leader and watch the
// cluster elect another and the node rejoin from its own state.

// devProc is one process of the local cluster, as cluster.json lists it.
type devProc struct {
	Role     string `json:"role"`
	ShardID  string `json:"shard_id,omitempty"`
	NodeID   string `json:"node_id"`
	PID      int    `json:"pid"`
	HTTP     string `json:"http"`
	Raft     string `json:"raft,omitempty"`
	Gossip   string `json:"gossip"`
	Pprof    string `json:"pprof,omitempty"` // with dev --pprof-addr
	DataDir  string `json:"data_dir,omitempty"`
	Log      string `json:"log"`
	Status   string `json:"status"` // starting, running, exited
	Restarts int    `json:"restarts"`

	args []string
}

func (p *devProc) name() string {
	switch {
	case p.Role == "shard":
		return p.ShardID + "-" + p.NodeID
	case p.Role == "control" && p.NodeID != "control1":
		return p.NodeID
	}
	return p.Role
}

// controlNodes is how many nodes the control plane runs: one, or as many
// as a shard cluster has (at most 5) when those are replicated.
func (o devOptions) controlNodes() int {
	if o.replicas > 1 {
		return min(o.replicas, 5)
	}
	return 1
}

// clusterFile is <data-dir>/cluster.json.
type clusterFile struct {
	Gateway   string     `json:"gateway"`
	Control   string     `json:"control"`
	Shards    int        `json:"shards"`
	Replicas  int        `json:"replicas"`
	Processes []*devProc `json:"processes"`
	UpdatedAt time.Time  `json:"updated_at"`
}

type devCluster struct {
	o         devOptions
	files     devFiles
	bin       string
	path      string       // cluster.json
	ca        *devPKI      // issues every process its certificate
	gossipKey string       // the key file every process reads
	hc        *http.Client // this command's own calls, with the operator certificate
	ports     *devPorts    // held until the process each is for starts

	mu sync.Mutex
	cf clusterFile
}

func runDevCluster(ctx context.Context, o devOptions, out io.Writer) error {
	if err := privateDataDir(o.dataDir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(o.dataDir, "logs"), 0o700); err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	files := filesIn(o.dataDir)
	ca, err := openDevPKI(o.dataDir)
	if err != nil {
		return err
	}
	gossipKey, err := readOrCreateGossipKey(o.dataDir)
	if err != nil {
		return err
	}
	if o.tunnelAddr != "" {
		if _, err := openSelfHostedCA(o.dataDir); err != nil {
			return err
		}
	}
	if _, err := ca.files("operator", devOperator); err != nil {
		return err
	}
	op, err := ca.creds(devOperator)
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: op.Client(nil)}}
	defer hc.CloseIdleConnections()
	c := &devCluster{o: o, files: files, bin: bin, path: filepath.Join(o.dataDir, "cluster.json"), ca: ca, gossipKey: gossipKey, hc: hc,
		ports: newDevPorts()}
	defer c.ports.releaseAll()
	if err := c.plan(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	stopAll := make(chan struct{})
	defer close(stopAll)
	run := func(p *devProc) { wg.Add(1); go func() { defer wg.Done(); c.supervise(p, stopAll) }() }

	ctl := c.cf.Processes[0]
	// The first control node bootstraps the group; the others join it.
	for _, p := range c.cf.Processes {
		if p.Role != "control" {
			continue
		}
		run(p)
		if err := c.waitHTTP(ctx, "https://"+p.HTTP+"/readyz", 60*time.Second); err != nil {
			return fmt.Errorf("%s: %w (log: %s)", p.name(), err, p.Log)
		}
	}
	for _, p := range c.cf.Processes {
		if p.Role != "shard" || p.NodeID != "n1" {
			continue
		}
		run(p) // the first node of each shard bootstraps it
		if err := c.waitHTTP(ctx, "https://"+p.HTTP+"/readyz", 60*time.Second); err != nil {
			return fmt.Errorf("shard %s: %w (log: %s)", p.name(), err, p.Log)
		}
	}
	for _, p := range c.cf.Processes {
		if p.Role == "shard" && p.NodeID != "n1" {
			run(p)
		}
	}
	if err := c.waitShards(ctx); err != nil {
		return err
	}
	if err := c.bootstrapTenant(ctx); err != nil {
		return err
	}
	gw := c.cf.Processes[len(c.cf.Processes)-1]
	run(gw)
	if err := c.waitHTTP(ctx, "http://"+gw.HTTP+"/readyz", 60*time.Second); err != nil {
		return fmt.Errorf("gateway: %w (log: %s)", err, gw.Log)
	}
	fmt.Fprintf(out, `Jobbie is running: %d shard clusters of %d nodes, each node its own process.
  gateway (public API):  http://%[3]s
  console:               http://%[3]s/console/ (sign in with the owner key)
  control plane:         https://%[4]s
  processes:             %s (kept current; logs in %s)
  owner key:             %s
  operator key:          %s
  certificates:          %s (ca.crt; operator.crt and operator.key for tools)
  gossip key:            %s

Kill a shard leader (its pid is in cluster.json; `+"`jobbie shard members --url <node> --tls-cert %[9]s/operator.crt "+
		"--tls-key %[9]s/operator.key --tls-ca %[9]s/ca.crt`"+` says who leads) and watch another take over; the
killed node is restarted and rejoins.
`, o.shards, o.replicas, gw.HTTP, ctl.HTTP, c.path, filepath.Join(o.dataDir, "logs"),
		files.owner, files.operator, files.pki, gossipKey)
	<-ctx.Done()
	fmt.Fprintln(out, "jobbie dev: shutting down")
	return nil
}

// plan lays out every process, reusing the addresses of an earlier run:
// Raft keeps its members' addresses, so a restarted cluster must come back
// on the same ports.
func (c *devCluster) plan() error {
	var prev clusterFile
	if raw, err := os.ReadFile(c.path); err == nil {
		if err := json.Unmarshal(raw, &prev); err != nil {
			return fmt.Errorf("%s: %w", c.path, err)
		}
		if prev.Shards != c.o.shards || prev.Replicas != c.o.replicas {
			return fmt.Errorf("%s was made with --shards %d --replicas %d; use those, or another --data-dir", c.path, prev.Shards, prev.Replicas)
		}
	}
	old := map[string]*devProc{}
	for _, p := range prev.Processes {
		old[p.name()] = p
	}
	for _, p := range prev.Processes {
		for _, a := range []string{p.HTTP, p.Gossip, p.Raft} {
			c.ports.keep(a)
		}
	}
	addr := func(p *devProc, have, want string) (string, error) {
		switch {
		case want != "":
			c.ports.keep(want)
			return want, nil
		case have != "":
			return have, nil
		}
		return c.ports.pick()
	}
	var procs []*devProc
	add := func(p *devProc, httpWant string) error {
		o := old[p.name()]
		if o == nil {
			o = &devProc{}
		}
		var err error
		if p.HTTP, err = addr(p, o.HTTP, httpWant); err != nil {
			return err
		}
		if p.Gossip, err = addr(p, o.Gossip, ""); err != nil {
			return err
		}
		if p.Role != "gateway" {
			if p.Raft, err = addr(p, o.Raft, ""); err != nil {
				return err
			}
		}
		if c.o.pprofAddr != "" {
			if p.Pprof, err = c.ports.pick(); err != nil {
				return err
			}
		}
		p.Log = filepath.Join(c.o.dataDir, "logs", p.name()+".log")
		p.Status = "starting"
		procs = append(procs, p)
		return nil
	}
	for i := 1; i <= c.o.controlNodes(); i++ {
		p, want := &devProc{Role: "control", NodeID: fmt.Sprintf("control%d", i), DataDir: filepath.Join(c.o.dataDir, "control")}, c.o.controlAddr
		if i > 1 {
			p.DataDir, want = filepath.Join(c.o.dataDir, p.NodeID), ""
		}
		if err := add(p, want); err != nil {
			return err
		}
	}
	for s := 1; s <= c.o.shards; s++ {
		for n := 1; n <= c.o.replicas; n++ {
			sid, nid := fmt.Sprintf("s%d", s), fmt.Sprintf("n%d", n)
			if err := add(&devProc{Role: "shard", ShardID: sid, NodeID: nid,
				DataDir: filepath.Join(c.o.dataDir, "shards", sid, nid)}, ""); err != nil {
				return err
			}
		}
	}
	if err := add(&devProc{Role: "gateway", NodeID: "gateway1"}, c.o.addr); err != nil {
		return err
	}
	ctl := procs[0]
	var ctlURLs, ctlGossip []string
	for _, p := range procs {
		if p.Role == "control" {
			ctlURLs, ctlGossip = append(ctlURLs, "https://"+p.HTTP), append(ctlGossip, p.Gossip)
		}
	}
	for _, p := range procs {
		if p.Role != "control" {
			continue
		}
		// One backup directory for every control node: whichever leads
		// reads the backups an earlier leader wrote.
		p.args = []string{"control", "--data-dir", p.DataDir, "--http", p.HTTP, "--raft", p.Raft,
			"--node-id", p.NodeID, "--gossip", p.Gossip, "--join", strings.Join(ctlGossip, ","),
			"--backup-dir", filepath.Join(c.o.dataDir, "backups"),
			"--backup-policy-min-interval", "0"} // as in one process: tests use "@every 1s"
		if p != ctl {
			p.args = append(p.args, "--join-http", ctl.HTTP)
		}
	}
	if !exists(c.files.operator) {
		ctl.args = append(ctl.args, "--operator-key-file", c.files.operator)
	}
	first := map[string]*devProc{}
	for _, p := range procs {
		if p.Role != "shard" {
			continue
		}
		p.args = []string{"shard", "--node-id", p.NodeID, "--shard-id", p.ShardID, "--data-dir", p.DataDir,
			"--http", p.HTTP, "--raft", p.Raft, "--gossip", p.Gossip, "--join", strings.Join(ctlGossip, ","),
			"--control", strings.Join(ctlURLs, ",")}
		p.args = append(p.args, c.o.push.args()...)
		p.args = append(p.args, traceShareArgs(c.o.traceShare)...)
		p.args = append(p.args, alertIntervalArgs(c.o.alertInterval)...)
		if !c.o.effects {
			p.args = append(p.args, "--replicate-effects=false")
		}
		if f := first[p.ShardID]; f == nil {
			first[p.ShardID] = p
			p.args = append(p.args, "--bootstrap")
		} else {
			p.args = append(p.args, "--join-http", f.HTTP)
		}
	}
	gw := procs[len(procs)-1]
	// The gateway knows every control node (and finds more in gossip).
	gw.args = []string{"gateway", "--http", gw.HTTP, "--control", strings.Join(ctlURLs, ","), "--name", gw.NodeID,
		"--gossip", gw.Gossip, "--join", strings.Join(ctlGossip, ",")}
	gw.args = append(gw.args, traceShareArgs(c.o.traceShare)...)
	gw.args = append(gw.args, c.o.sso.args()...)
	if c.o.grpcAddr != "" {
		gw.args = append(gw.args, "--grpc-addr", c.o.grpcAddr, "--grpc-keepalive", c.o.grpcKeepAlive.String(),
			"--grpc-scaler-poll", c.o.scalerPoll.String())
		if c.o.grpcPublicURL != "" {
			gw.args = append(gw.args, "--grpc-public-url", c.o.grpcPublicURL)
		}
	}
	if c.o.tunnelAddr != "" {
		// Self-hosted shards: every control node signs with the one
		// self-hosted CA and names the gateway's tunnel listener, which
		// trusts that CA's certificate alone.
		dir := selfHostedCADir(c.o.dataDir)
		for _, p := range procs {
			if p.Role == "control" {
				p.args = append(p.args, "--selfhosted-ca-dir", dir, "--tunnel-url", c.o.tunnelAddr,
					"--selfhosted-cert-validity", c.o.certLife.String())
			}
		}
		gw.args = append(gw.args, "--tunnel", c.o.tunnelAddr, "--selfhosted-ca-file", filepath.Join(dir, "ca.crt"),
			"--trust-push-interval", c.o.trustPush.String())
	}
	// Every process gets a certificate of its own, issued afresh at each
	// start, and the gossip key.
	for _, p := range procs {
		id := pki.Identity{Role: pki.Role(p.Role), Shard: p.ShardID, Node: p.NodeID}
		tlsArgs, err := c.ca.files(p.name(), id)
		if err != nil {
			return err
		}
		p.args = append(p.args, tlsArgs...)
		p.args = append(p.args, "--gossip-key-file", c.gossipKey)
		// The processes log in dev's format; at their own default level
		// (info, for the logs the cluster keeps) unless dev was given one.
		if c.o.log.Format != "" {
			p.args = append(p.args, "--log-format", c.o.log.Format)
		}
		if c.o.logLevelSet {
			p.args = append(p.args, "--log-level", c.o.log.Level)
		}
	}
	for _, p := range procs {
		if p.Pprof != "" {
			p.args = append(p.args, "--pprof-addr", p.Pprof)
		}
	}
	c.cf = clusterFile{Gateway: gw.HTTP, Control: ctl.HTTP, Shards: c.o.shards, Replicas: c.o.replicas, Processes: procs}
	return c.save()
}

package e2e

import (
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// Attacks from a process on the same network: a rogue Raft peer and a
// rogue gossip member, against a running multi-process cluster. Each
// attack worked before internal channels were authenticated (a forged
// RequestVote made a shard leader step down; a rogue gossip member that
// claimed a shard's leadership was sent tenants' requests with the
// cluster's credential); each must now fail, and the same attack made
// with the right identity shows the test would catch it.

// rogueProc is one process of cluster.json, with its Raft and gossip
// addresses.
type rogueProc struct {
	Role    string `json:"role"`
	ShardID string `json:"shard_id"`
	NodeID  string `json:"node_id"`
	HTTP    string `json:"http"`
	Raft    string `json:"raft"`
	Gossip  string `json:"gossip"`
}

func rogueProcs(t *testing.T, dir string) map[string]rogueProc {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "cluster.json"))
	require.NoError(t, err)
	var cf struct {
		Processes []rogueProc `json:"processes"`
	}
	require.NoError(t, json.Unmarshal(raw, &cf))
	out := map[string]rogueProc{}
	for _, p := range cf.Processes {
		name := p.Role
		if p.Role == "shard" {
			name = p.ShardID + "-" + p.NodeID
		}
		out[name] = p
	}
	return out
}

// rogueCert issues a certificate with `jobbie certs issue` from the CA in
// caDir and returns it for a TLS client or server.
func rogueCert(t *testing.T, caDir, role, shard, node string) tls.Certificate {
	t.Helper()
	out := filepath.Join(t.TempDir(), "rogue")
	args := []string{"certs", "issue", "--ca-dir", caDir, "--role", role, "--node", node, "--host", "127.0.0.1", "--out", out}
	if shard != "" {
		args = append(args, "--shard", shard)
	}
	b, err := exec.Command(binary, args...).CombinedOutput()
	require.NoError(t, err, string(b))
	cert, err := tls.LoadX509KeyPair(out+".crt", out+".key")
	require.NoError(t, err)
	return cert
}

// otherCA is a CA of the attacker's own.
func otherCA(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := exec.Command(binary, "certs", "ca", "--dir", dir).CombinedOutput()
	require.NoError(t, err, string(b))
	return dir
}

// rogueStream is a Raft stream layer that dials with dial: plain TCP, or
// TLS with whatever certificate the attacker holds.
type rogueStream struct {
	net.Listener
	dial func(addr string, timeout time.Duration) (net.Conn, error)
}

func (s rogueStream) Dial(a raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return s.dial(string(a), timeout)
}

func plainDial(addr string, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", addr, timeout)
}

func tlsDial(cert tls.Certificate) func(string, time.Duration) (net.Conn, error) {
	return func(addr string, timeout time.Duration) (net.Conn, error) {
		// The attacker does not care who the server is.
		cfg := &tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}
		return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", addr, cfg)
	}
}

// rogueTransport is a Raft transport that dials with dial.
func rogueTransport(t *testing.T, dial func(string, time.Duration) (net.Conn, error)) *raft.NetworkTransport {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return raft.NewNetworkTransport(rogueStream{Listener: ln, dial: dial}, 1, 3*time.Second, io.Discard)
}

// forgeVote sends target a RequestVote in the name of member (its own id
// and address, as a leadership transfer, so a leader that accepts it steps
// down) for term.
func forgeVote(t *testing.T, dial func(string, time.Duration) (net.Conn, error), target, member string, term uint64) error {
	t.Helper()
	tr := rogueTransport(t, dial)
	defer tr.Close()
	var resp raft.RequestVoteResponse
	return tr.RequestVote(raft.ServerID(member), raft.ServerAddress(target), &raft.RequestVoteRequest{
		RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(member), Addr: []byte(target)},
		Term:      term, LastLogIndex: 1 << 40, LastLogTerm: term, LeadershipTransfer: true,
	}, &resp)
}

// forgeAppend sends target an AppendEntries of one command as a leader of
// term would.
func forgeAppend(t *testing.T, dial func(string, time.Duration) (net.Conn, error), target string, term uint64) error {
	t.Helper()
	tr := rogueTransport(t, dial)
	defer tr.Close()
	var resp raft.AppendEntriesResponse
	return tr.AppendEntries("control1", raft.ServerAddress(target), &raft.AppendEntriesRequest{
		RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("rogue"), Addr: []byte(tr.LocalAddr())},
		Term:      term, PrevLogEntry: 0, PrevLogTerm: 0, LeaderCommitIndex: 1 << 30,
		Entries: []*raft.Log{{Index: 1 << 30, Term: term, Type: raft.LogCommand, Data: []byte(`{"forged":true}`)}},
	}, &resp)
}

func TestRogueRaftPeerIsRefused(t *testing.T) {
	t.Parallel()
	c := launchCluster(t, 2, 1)
	caDir := filepath.Join(c.dir, "pki")
	procs := rogueProcs(t, c.dir)
	s1, ctl := procs["s1-n1"], procs["control"]
	before := c.shardState(t, s1)
	require.Equal(t, "leader", before.State)
	jwksBefore := jwks(t, c)

	attackers := map[string]func(string, time.Duration) (net.Conn, error){
		"plain TCP":             plainDial,
		"a gateway certificate": tlsDial(rogueCert(t, caDir, "gateway", "", "rogue")),
		"a node of shard s2":    tlsDial(rogueCert(t, caDir, "shard", "s2", "n1")),
		"another CA's s1 node":  tlsDial(rogueCert(t, otherCA(t), "shard", "s1", "n1")),
		"an operator":           tlsDial(rogueCert(t, caDir, "operator", "", "rogue")),
	}
	for name, dial := range attackers {
		require.Error(t, forgeVote(t, dial, s1.Raft, "n1", before.Term+100), "a vote from %s reaches shard s1's Raft", name)
	}
	// Control's Raft: a shard node's certificate, or none, appends nothing.
	for name, dial := range map[string]func(string, time.Duration) (net.Conn, error){
		"plain TCP":            plainDial,
		"a node of shard s1":   tlsDial(rogueCert(t, caDir, "shard", "s1", "n1")),
		"a gateway":            tlsDial(rogueCert(t, caDir, "gateway", "", "rogue")),
		"another CA's control": tlsDial(rogueCert(t, otherCA(t), "control", "", "control1")),
	} {
		require.Error(t, forgeAppend(t, dial, ctl.Raft, 1<<20), "an append from %s reaches control's Raft", name)
		require.Error(t, forgeVote(t, dial, ctl.Raft, "control1", 1<<20), "a vote from %s reaches control's Raft", name)
	}

	require.Equal(t, jwksBefore, jwks(t, c), "control's signing keys are as they were")
	after := c.shardState(t, s1)
	require.Equal(t, "leader", after.State, "shard s1's leader did not step down")
	require.Equal(t, before.Term, after.Term, "no forged term was seen")
	// Control still serves writes as before: a namespace is created and
	// takes jobs.
	r := call(t, "POST", c.gateway+"/api/v1/namespaces", c.ownerKey, map[string]string{"name": "after-rogue"})
	require.Equal(t, 201, r.Status, string(r.Raw))
	_, err := client.New(c.gateway, c.ownerKey, client.WithNamespace("after-rogue")).Enqueue(ctx(t), client.EnqueueRequest{Queue: "q"})
	require.NoError(t, err)

	// The same vote with a certificate of s1 is delivered and obeyed: the
	// attack is real, and only the certificate stops it.
	require.NoError(t, forgeVote(t, tlsDial(rogueCert(t, caDir, "shard", "s1", "n9")), s1.Raft, "n1", before.Term+100))
	eventually(t, 10*time.Second, func() bool { return c.shardState(t, s1).Term >= before.Term+100 }, "a member's vote moves the term")
}

func TestRogueGossipMemberGetsNothing(t *testing.T) {
	t.Parallel()
	c := launchCluster(t, 2, 1)
	caDir := filepath.Join(c.dir, "pki")
	procs := rogueProcs(t, c.dir)
	gw := procs["gateway"]
	keyHex, err := os.ReadFile(filepath.Join(c.dir, "gossip.key"))
	require.NoError(t, err)
	key, err := hex.DecodeString(strings.TrimSpace(string(keyHex)))
	require.NoError(t, err)

	// Without the key a stranger cannot join.
	stranger := rogueMember(t, "shard-s1-stranger", nil, nil)
	_, err = stranger.Join([]string{gw.Gossip})
	require.Error(t, err, "a member without the gossip key joins")
	require.Equal(t, 1, stranger.NumMembers())

	// With the key (an insider, or a leaked key) a member claims the lead
	// of every shard, pointing at its own HTTPS server. It serves a
	// certificate that is not a member's of the shard: of shard s2, or of
	// another CA. Last, the same claim backed by a stolen certificate of
	// an s1 node does get requests: only the certificate stops the attack.
	for _, tc := range []struct {
		name   string
		cert   tls.Certificate
		member bool
	}{
		{"a node of shard s2", rogueCert(t, caDir, "shard", "s2", "n7"), false},
		{"another CA's s1", rogueCert(t, otherCA(t), "shard", "s1", "n7"), false},
		{"a stolen s1 certificate", rogueCert(t, caDir, "shard", "s1", "n7"), true},
	} {
		name, cert := tc.name, tc.cert
		t.Run(name, func(t *testing.T) {
			var dials, requests atomic.Int64
			tcp, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			ln := countingListener{Listener: tcp, n: &dials}
			srv := &http.Server{
				Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					requests.Add(1) // a tenant's request reached the rogue
					w.WriteHeader(http.StatusCreated)
					_, _ = w.Write([]byte(`{"job_id":"job_fake","status":"pending"}`))
				}),
				TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert},
				ErrorLog:  log.New(io.Discard, "", 0), // refused handshakes are the point
			}
			go func() { _ = srv.ServeTLS(ln, "", "") }()
			defer srv.Close()

			rogueAddr := ln.Addr().String()
			metas := map[string][]byte{}
			for _, shard := range []string{"s1", "s2"} {
				metas[shard], err = json.Marshal(map[string]any{"r": "shard", "s": shard, "n": "rogue", "rs": "leader",
					"t": uint64(1) << 40, "l": "rogue", "lh": rogueAddr, "h": rogueAddr, "ra": "127.0.0.1:1"})
				require.NoError(t, err)
			}
			for shard, meta := range metas {
				m := rogueMember(t, "shard-"+shard+"-rogue-"+strings.ReplaceAll(name, " ", ""), key, meta)
				_, err := m.Join([]string{gw.Gossip})
				require.NoError(t, err, "a member with the key joins the pool")
			}

			api := client.New(c.gateway, c.ownerKey)
			deadline := time.Now().Add(20 * time.Second)
			if tc.member {
				for requests.Load() == 0 {
					require.True(t, time.Now().Before(deadline), "a rogue with a member's certificate is not believed")
					_, _ = api.Enqueue(ctx(t), client.EnqueueRequest{Queue: "q"})
				}
				return
			}
			// Tenants keep working, and every job is real: stored, readable.
			// The gateway believes the claim (it dials the rogue) and sends
			// it nothing.
			for i := 0; i < 30 || dials.Load() == 0; i++ {
				require.True(t, time.Now().Before(deadline), "the gateway never tried the rogue: the claim did not reach it")
				res, err := api.Enqueue(ctx(t), client.EnqueueRequest{Queue: "q", Payload: map[string]int{"i": i}})
				require.NoError(t, err)
				require.NotEqual(t, "job_fake", res.JobID)
				j, err := api.GetJob(ctx(t), res.JobID)
				require.NoError(t, err)
				require.Equal(t, "pending", j.State)
			}
			require.Zero(t, requests.Load(), "no request reached the rogue (its handshake was refused)")
			t.Logf("%s: the gateway dialled the rogue %d times and sent it nothing", name, dials.Load())
		})
	}
}

// jwks is control's published signing keys.
func jwks(t *testing.T, c *localCluster) string {
	t.Helper()
	res, err := devPKIClient(t, c.dir).Get(c.control + "/control/v1/jwks")
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, 200, res.StatusCode, string(b))
	return string(b)
}

// shardState is how node p sees its group.
func (c *localCluster) shardState(t *testing.T, p rogueProc) nodeState {
	t.Helper()
	s, ok := c.status(clusterProc{Role: p.Role, ShardID: p.ShardID, NodeID: p.NodeID, HTTP: p.HTTP})
	require.True(t, ok, "node %s-%s answers its status", p.ShardID, p.NodeID)
	return s
}

// rogueMember is a memberlist node (not Jobbie's pool) with the given key
// (nil: none) and metadata.
func rogueMember(t *testing.T, name string, key, meta []byte) *memberlist.Memberlist {
	t.Helper()
	cfg := memberlist.DefaultLANConfig()
	cfg.Name, cfg.BindAddr, cfg.BindPort, cfg.AdvertisePort = name, "127.0.0.1", 0, 0
	cfg.LogOutput = io.Discard
	if key != nil {
		kr, err := memberlist.NewKeyring(nil, key)
		require.NoError(t, err)
		cfg.Keyring, cfg.GossipVerifyIncoming, cfg.GossipVerifyOutgoing = kr, true, true
	}
	cfg.Delegate = metaDelegate(meta)
	m, err := memberlist.Create(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Leave(time.Second); _ = m.Shutdown() })
	return m
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

type metaDelegate []byte

func (d metaDelegate) NodeMeta(int) []byte           { return d }
func (metaDelegate) NotifyMsg([]byte)                {}
func (metaDelegate) GetBroadcasts(int, int) [][]byte { return nil }
func (metaDelegate) LocalState(bool) []byte          { return nil }
func (metaDelegate) MergeRemoteState([]byte, bool)   {}

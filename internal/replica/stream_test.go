package replica

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/pki"
)

// tlsFor issues a shard identity from ca and makes node id's Raft mutual
// TLS admitting only shard s1's members.
func tlsFor(t *testing.T, ca *pki.CA, shard, node string) *RaftTLS {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue(pki.Identity{Role: pki.RoleShard, Shard: shard, Node: node}, nil, time.Hour)
	require.NoError(t, err)
	creds, err := pki.NewCredentials(certPEM, keyPEM, ca.CertPEM())
	require.NoError(t, err)
	return &RaftTLS{Server: creds.Server(pki.ShardMember(shard)), Client: creds.Client(pki.ShardMember(shard))}
}

// A group over mutual TLS replicates as before; a process without a
// member's certificate can neither append nor call an election.
func TestRaftOverMutualTLSRefusesStrangers(t *testing.T) {
	t.Parallel()
	ca, err := pki.NewCA("test ca")
	require.NoError(t, err)
	c := newCluster(t, 3, func(cfg *Config) { cfg.RaftTLS = tlsFor(t, ca, "s1", cfg.NodeID) })
	for i := 0; i < 20; i++ {
		c.add(1)
	}
	c.converged(20)
	leader := c.leader()
	term := leader.raft.CurrentTerm()
	target := raft.ServerAddress(leader.RaftAddr())

	// The forger claims to be another member, whose id and address it can
	// read from gossip or guess.
	var member *Node
	for _, n := range c.nodes {
		if n != leader {
			member = n
		}
	}
	hdr := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(member.cfg.NodeID), Addr: []byte(member.RaftAddr())}
	vote := func(trans raft.Transport) error {
		var resp raft.RequestVoteResponse
		return trans.RequestVote(raft.ServerID(leader.cfg.NodeID), target, &raft.RequestVoteRequest{RPCHeader: hdr,
			Term: term + 100, LastLogIndex: 1 << 40, LastLogTerm: term + 99}, &resp)
	}
	appendEntries := func(trans raft.Transport) error {
		var resp raft.AppendEntriesResponse
		return trans.AppendEntries(raft.ServerID(leader.cfg.NodeID), target, &raft.AppendEntriesRequest{RPCHeader: hdr,
			Term: term + 100, PrevLogEntry: 0, Entries: []*raft.Log{{Index: 1 << 40, Term: term + 100, Type: raft.LogCommand, Data: Command(cmdAdd, []byte{99})}}}, &resp)
	}

	// Plain TCP, as before this transport existed.
	plain, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, 2*time.Second, io.Discard)
	require.NoError(t, err)
	defer plain.Close()
	require.Error(t, vote(plain))
	require.Error(t, appendEntries(plain))

	// TLS with a certificate from the same CA, but of another shard; this
	// client would talk to anyone, so it is the leader that refuses.
	certPEM, keyPEM, err := ca.Issue(pki.Identity{Role: pki.RoleShard, Shard: "s2", Node: "n1"}, nil, time.Hour)
	require.NoError(t, err)
	otherCreds, err := pki.NewCredentials(certPEM, keyPEM, ca.CertPEM())
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	stranger := raft.NewNetworkTransport(&stream{Listener: tls.NewListener(l, otherCreds.Server(nil)), client: otherCreds.Client(nil)},
		1, 2*time.Second, io.Discard)
	defer stranger.Close()
	require.Error(t, vote(stranger))
	require.Error(t, appendEntries(stranger))

	require.Same(t, leader, c.leader(), "the leader kept its lead")
	require.Equal(t, term, leader.raft.CurrentTerm(), "no election was forced")
	c.add(1)
	c.converged(21)
}

// A connection to the Raft port that never finishes its TLS handshake is
// closed at the handshake deadline (it was held for good), and the group
// replicates meanwhile.
func TestRaftClosesConnectionsThatNeverHandshake(t *testing.T) {
	t.Parallel()
	ca, err := pki.NewCA("test ca")
	require.NoError(t, err)
	c := newCluster(t, 1, func(cfg *Config) { cfg.RaftTLS = tlsFor(t, ca, "s1", cfg.NodeID) })
	leader := c.leader()
	silent, err := net.Dial("tcp", leader.RaftAddr())
	require.NoError(t, err)
	defer silent.Close()
	c.add(1)
	require.NoError(t, silent.SetReadDeadline(time.Now().Add(60*time.Second)))
	start := time.Now()
	_, err = io.ReadAll(silent)
	require.NoError(t, err, "the node closed the silent connection (a read timeout would be an error)")
	t.Logf("closed after %s", time.Since(start).Round(time.Millisecond))
}

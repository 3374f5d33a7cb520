package replica

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/raft"

	"github.com/jobbie/jobbie/internal/listen"
)

// RaftTLS makes the Raft transport mutual TLS: Server checks the members
// that dial this node, Client the members it dials. Without it any process
// that reaches the Raft port could append entries or force elections.
type RaftTLS struct {
	Server *tls.Config
	Client *tls.Config
}

// stream is the raft.StreamLayer: a listen.Listener, so that accept
// errors are retried and reported (raft's transport retries too, but
// silently), and over TLS each connection must finish its handshake
// within listen.DefaultHandshakeTimeout, with the unfinished ones capped
// in all and per address; otherwise a peer that never sends its
// ClientHello would hold a descriptor forever. The server side's
// handshake runs on the transport's connection goroutine (at the first
// read), so a peer that stalls it holds only its own connection.
//
// Close also closes the connections it accepted and returns only once
// their handlers have ended (inbound.go): raft's NetworkTransport.Close
// stops only the listener, and a handler still running a heartbeat
// (raft's fast path, which saves a newer term) after the node closed its
// stores made raft panic ("failed to save current term: closed").
type stream struct {
	net.Listener
	advertise net.Addr
	client    *tls.Config // nil: plain TCP
	inbound   inbound
}

// Accept hands raft each connection counted until its handler closes it.
func (s *stream) Accept() (net.Conn, error) {
	c, err := s.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return s.inbound.track(c)
}

// Close stops listening, closes the accepted connections, and waits until
// their handlers are done, so nothing of raft runs on them afterwards.
func (s *stream) Close() error {
	err := s.Listener.Close()
	s.inbound.close()
	return err
}

func (s *stream) Addr() net.Addr {
	if s.advertise != nil {
		return s.advertise
	}
	return s.Listener.Addr()
}

// Dial connects to a member and, over TLS, completes the handshake within
// timeout, so an impostor is refused before any RPC is sent to it.
func (s *stream) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	if s.client == nil {
		return d.Dial("tcp", string(address))
	}
	return tls.DialWithDialer(d, "tcp", string(address), s.client)
}

// transport listens on RaftAddr and advertises RaftAdvertise (or the bound
// address) to the other members, over TLS when RaftTLS is set.
func (n *Node) transport() (*raft.NetworkTransport, error) {
	adv := n.cfg.RaftAdvertise
	if adv == "" {
		adv = n.cfg.RaftAddr
	}
	var addr net.Addr
	if n.cfg.RaftAdvertise != "" || !hasZeroPort(adv) {
		a, err := net.ResolveTCPAddr("tcp", adv)
		if err != nil {
			return nil, fmt.Errorf("replica: raft address: %w", err)
		}
		addr = a
	}
	if n.cfg.RaftTLS != nil && (n.cfg.RaftTLS.Server == nil || n.cfg.RaftTLS.Client == nil) {
		return nil, errors.New("replica: RaftTLS needs both a Server and a Client configuration")
	}
	ln, err := net.Listen("tcp", n.cfg.RaftAddr)
	if err != nil {
		return nil, fmt.Errorf("replica: raft transport: %w", err)
	}
	s := &stream{advertise: addr}
	lc := listen.Config{Name: "raft", Group: n.cfg.Listeners}
	if n.cfg.RaftTLS == nil {
		s.Listener = listen.New(ln, lc)
	} else {
		budget := listen.ProcessBudget()
		lc.HandshakeTimeout, lc.MaxPending, lc.MaxPendingPerAddr = listen.DefaultHandshakeTimeout, budget.Pending, listen.DefaultMaxPendingPerAddr
		s.Listener = listen.TLS(listen.New(ln, lc), n.cfg.RaftTLS.Server)
		s.client = n.cfg.RaftTLS.Client
	}
	if a, ok := s.Addr().(*net.TCPAddr); !ok || a.IP == nil || a.IP.IsUnspecified() {
		_ = s.Close()
		return nil, fmt.Errorf("replica: raft address %s cannot be advertised to other members", s.Addr())
	}
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: s, MaxPool: 4, Timeout: 10 * time.Second, Logger: n.cfg.Logger,
	}), nil
}

// unpipelined is the network transport without pipelined replication:
// the leader sends each follower one AppendEntries at a time (each up to
// MaxAppendEntries entries). hashicorp/raft v1.8's pipeline deadlocks
// when a follower answers Success=false: its decoder stops reading
// answers while the sender may already be parked handing the decoder one
// more request, and the pipeline is closed only after that send. The
// follower then gets heartbeats but never another entry (so no election
// heals it), and the leader's Shutdown waits forever (seen here: a
// 3-node test's leader stop hung for 15 minutes in
// netPipeline.AppendEntries).
type unpipelined struct{ *raft.NetworkTransport }

// AppendEntriesPipeline refuses, which makes raft replicate without one.
func (unpipelined) AppendEntriesPipeline(raft.ServerID, raft.ServerAddress) (raft.AppendPipeline, error) {
	return nil, raft.ErrPipelineReplicationNotSupported
}

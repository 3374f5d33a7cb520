package replica

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

// A heartbeat whose handler is inside raft when the node stops finishes
// before the stores close: the stop closes the member's connection and
// waits for the handler. Before, the stores closed under it, and raft,
// saving the newer term, panicked ("failed to save current term: closed").
//
// The handler is held where the race window is: raft's heartbeat fast
// path has passed its shutdown check and is stepping down, about to save
// the term. The hold is an observer filter, which raft calls there with
// its observer lock held; the node's own watcher takes that lock to
// leave, so the test runs closeStores, the stop's step that the bug was
// in, and stops the node's loops after it.
func TestStopWaitsForHeartbeatHandler(t *testing.T) {
	t.Parallel()
	c := newCluster(t, 1, nil)
	n := c.leader()
	term := n.raft.CurrentTerm()

	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	n.raft.RegisterObserver(raft.NewObserver(nil, false, func(o *raft.Observation) bool {
		// The leader blanks its leader before its state: this is the
		// heartbeat's step down, not the shutdown's (which comes later).
		if lo, ok := o.Data.(raft.LeaderObservation); ok && lo.LeaderID == "" && o.Raft.State() == raft.Leader {
			once.Do(func() { close(held); <-release })
		}
		return false
	}))

	// A member of a newer term sends its heartbeat, as a peer would.
	peer, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, 0, io.Discard)
	require.NoError(t, err)
	defer peer.Close()
	answered := make(chan error, 1)
	go func() {
		var resp raft.AppendEntriesResponse
		answered <- peer.AppendEntries(raft.ServerID(n.cfg.NodeID), raft.ServerAddress(n.RaftAddr()), &raft.AppendEntriesRequest{
			RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("n9"), Addr: []byte(peer.LocalAddr())},
			Term:      term + 1}, &resp)
	}()
	select {
	case <-held:
	case err := <-answered:
		t.Fatalf("the heartbeat was answered (%v) without reaching raft's step down", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the heartbeat never reached raft's step down")
	}

	stopped := make(chan error, 1)
	go func() { stopped <- n.closeStores(true) }()
	select {
	case err := <-answered:
		require.Error(t, err, "the node closed the member's connection")
	case <-stopped:
		// The stores are closed and the handler is still in raft: let it
		// go on, as the scheduler would have (raft panics here).
		close(release)
		<-answered
		t.Fatal("the stores closed while a connection's handler was inside raft")
	case <-time.After(30 * time.Second):
		t.Fatal("the stop neither closed the member's connection nor returned")
	}
	close(release)
	require.NoError(t, <-stopped)
	require.Equal(t, term+1, n.raft.CurrentTerm(), "the handler saved the newer term before the stores closed")

	// The rest of the stop, after the step it usually follows.
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	close(n.stop)
	n.wg.Wait()
}

// The stream closes the connections it accepted and returns from Close
// only once their handlers have closed them: before, it stopped only the
// listener, and a handler could go on running raft after the node closed.
func TestStreamCloseWaitsForHandlers(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &stream{Listener: l}
	client, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer client.Close()
	handlerConn, err := s.Accept()
	require.NoError(t, err)

	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	require.NoError(t, client.SetReadDeadline(time.Now().Add(30*time.Second)))
	_, err = client.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "Close closed the accepted connection (a timeout: it was left open)")
	select {
	case <-closed:
		t.Fatal("Close returned while the connection's handler had not ended")
	default:
	}
	// The handler's read fails, and it closes its connection as it ends.
	_, err = handlerConn.Read(make([]byte, 1))
	require.Error(t, err)
	_ = handlerConn.Close() // the stream closed it already: an error
	require.NoError(t, <-closed)

	// Accept after Close fails; raft's accept loop stops on it.
	_, err = s.Accept()
	require.Error(t, err)
}

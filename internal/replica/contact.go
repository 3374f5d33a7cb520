package replica

import (
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// What a leader knows of when it last heard from each follower. Raft keeps
// that time per follower but publishes it only in an observation sent
// with each heartbeat that fails (FailedHeartbeatObservation, carrying the
// follower's last contact), and says when heartbeats work again
// (ResumedHeartbeatObservation). So a leader knows the time for a follower
// it cannot reach, and only that a follower it reaches answered within a
// heartbeat interval. A follower's own side is Raft's LastContact: when it
// last heard from its leader (Status.LastContact).

// contacts is the followers whose heartbeats from this leader fail, with
// Raft's last contact of each, in the term it was observed.
type contacts struct {
	mu     sync.Mutex
	failed map[string]contact
}

type contact struct {
	last time.Time
	term uint64
}

// observeContacts keeps n.contacts from Raft's heartbeat observations. The
// filter does the work and lets nothing through: it runs in Raft's
// heartbeat goroutine, under no lock of Raft's main loop, and an
// observation sent to a channel may be dropped when the channel is full,
// which would leave a follower failed after its heartbeats resumed.
func (n *Node) observeContacts() {
	n.contacts.failed = map[string]contact{}
	n.raft.RegisterObserver(raft.NewObserver(nil, false, func(o *raft.Observation) bool {
		c := &n.contacts
		switch d := o.Data.(type) {
		case raft.FailedHeartbeatObservation:
			c.mu.Lock()
			c.failed[string(d.PeerID)] = contact{last: d.LastContact, term: n.raft.CurrentTerm()}
			c.mu.Unlock()
		case raft.ResumedHeartbeatObservation:
			c.mu.Lock()
			delete(c.failed, string(d.PeerID))
			c.mu.Unlock()
		case raft.PeerObservation:
			if d.Removed {
				c.mu.Lock()
				delete(c.failed, string(d.Peer.ID))
				c.mu.Unlock()
			}
		}
		return false
	}))
}

// FollowerContact is, on the leader, when it last heard from follower id
// as Raft counts it, if its heartbeats to id fail now (ok false while they
// succeed, and on a node that does not lead). A follower the leader has
// not reached since its term began counts from the term's start.
func (n *Node) FollowerContact(id string) (last time.Time, ok bool) {
	if n.raft.State() != raft.Leader {
		return time.Time{}, false
	}
	term := n.raft.CurrentTerm()
	c := &n.contacts
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.failed[id]
	if !ok || f.term != term {
		return time.Time{}, false
	}
	return f.last, true
}

// LastContact is, on a follower, when it last heard from its leader (Raft's
// LastContact); zero on the leader and before any contact.
func (n *Node) LastContact() time.Time {
	if n.raft.State() == raft.Leader {
		return time.Time{}
	}
	return n.raft.LastContact()
}

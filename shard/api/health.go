package api

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// healthRoutes serves GET /api/v1/cluster, the shard's health as a tenant
// may see it; a GET is answered by the node asked, from what it knows.
func (s *Server) healthRoutes(api fiber.Router) {
	api.Get("/cluster", s.clusterHealth)
}

// listening fails, naming the listener and its error, while one of the
// process's listeners cannot accept connections (Config.Listening).
func (s *Server) listening() error {
	if s.cfg.Listening == nil {
		return nil
	}
	if err := s.cfg.Listening(); err != nil {
		return apierr.Retry(apierr.Unavailable, 1, "not ready: %v", err)
	}
	return nil
}

func (s *Server) clusterHealth(c *fiber.Ctx) error {
	h, err := s.Health()
	return reply(c, h, err)
}

// Health is the group as this node sees it: every member by id, its role,
// whether this node hears from it (itself, or its gossip), and how far it
// replicated (see wire.ClusterNode). Raft and gossip addresses stay out:
// they are the operator's, not the tenant's.
func (s *Server) Health() (wire.ClusterHealth, error) {
	ms, err := s.node.Members()
	if err != nil {
		return wire.ClusterHealth{}, err
	}
	leader := s.node.LeaderID()
	reports := s.reports(ms)
	commit, haveCommit := uint64(0), false
	if r, ok := reports[leader]; ok && r.fresh {
		commit, haveCommit = r.st.CommitIndex, true
	}
	out := wire.ClusterHealth{ShardID: s.cfg.ShardID, LeaderID: leader, Nodes: make([]wire.ClusterNode, 0, len(ms))}
	voters, reached := 0, 0
	for _, m := range ms {
		n := wire.ClusterNode{ID: m.ID, Role: wire.NodeFollower, Status: wire.NodeUnreachable}
		switch {
		case m.ID == leader: // from the one LeaderID read, so roles agree with leader_id
			n.Role = wire.NodeLeader
		case !m.Voter:
			n.Role = wire.NodeNonvoter
		}
		up := m.ID == s.cfg.NodeID
		if !up {
			_, up = s.httpOf(m.ID)
		}
		if up {
			n.Status = wire.NodeHealthy
		}
		if r, ok := reports[m.ID]; ok {
			// Raft's applied index, not the state's: the state counts
			// commands only, the commit index every entry.
			applied := max(r.st.RaftApplied, r.st.AppliedIndex)
			n.AppliedIndex, n.LastIndex = &applied, &r.st.LastIndex
			if haveCommit {
				lag := commit - min(commit, applied)
				n.Lag = &lag
			}
			if r.fresh && m.ID != leader {
				n.SinceContactMS = r.st.SinceContactMS
			}
		}
		if last, ok := s.node.FollowerContact(m.ID); ok {
			since := time.Since(last).Milliseconds()
			n.SinceContactMS = &since
		}
		if m.Voter {
			voters++
			if up {
				reached++
			}
		}
		out.Nodes = append(out.Nodes, n)
	}
	out.Healthy = leader != "" && reached > voters/2
	slices.SortFunc(out.Nodes, func(a, b wire.ClusterNode) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// statusWait bounds asking a member for its indexes. The health waits for
// the slowest member, and a gateway asks a self-hosted node for it over a
// tunnel with a second to spare (gateway/selfhosted).
const statusWait = 500 * time.Millisecond

// report is a member's status as this node last had it; fresh when the
// member gave it for this answer.
type report struct {
	st    replica.Status
	fresh bool
}

// lastReports is what each member last told this node of its status,
// which stands in for a member that does not answer now: a stopped
// follower applies nothing more, so its lag grows from its last report.
type lastReports struct {
	mu sync.Mutex
	by map[string]replica.Status
}

// reports asks every member this node can reach for its status, at once,
// and falls back to a member's last report.
func (s *Server) reports(ms []replica.Member) map[string]report {
	out := make(map[string]report, len(ms))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, m := range ms {
		if m.ID == s.cfg.NodeID {
			st := s.node.Status()
			mu.Lock()
			out[m.ID] = report{st: st, fresh: true}
			mu.Unlock()
			continue
		}
		addr, ok := s.httpOf(m.ID)
		if !ok {
			continue
		}
		wg.Go(func() {
			st, err := s.group.PeerStatus(addr, statusWait)
			if err != nil || st.NodeID != m.ID {
				return
			}
			mu.Lock()
			out[m.ID] = report{st: st.Status, fresh: true}
			mu.Unlock()
		})
	}
	wg.Wait()
	l := &s.last
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[string]replica.Status{}
	}
	kept := make(map[string]replica.Status, len(ms))
	for _, m := range ms {
		if r, ok := out[m.ID]; ok {
			kept[m.ID] = r.st
		} else if st, ok := l.by[m.ID]; ok {
			kept[m.ID] = st
			out[m.ID] = report{st: st}
		}
	}
	l.by = kept // a member removed is forgotten
	return out
}

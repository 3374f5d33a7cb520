package gossip

// Leader returns the node gateways should send shardID's requests to, as
// far as gossip knows, and false if gossip knows of no leader (the caller
// answers 503 with Retry-After). Exactly:
//
//  1. Only live members with Role "shard" and that ShardID count.
//  2. A claim is such a member advertising RaftState "leader". The best
//     claim has the highest Term (ties, which Raft rules out but stale
//     gossip might not, go to the smallest Name).
//  3. A report is such a member advertising a non-empty LeaderHTTP for its
//     Term; a leader reports itself. Only reports with the highest Term
//     seen among reports are kept.
//  4. If there is a claim and its Term is at least the highest reported
//     Term, the claimant is returned as is.
//  5. Otherwise (no claim, or every claim is from an older term than some
//     member already follows), the LeaderHTTP named by the most kept
//     reports wins (ties go to the smallest address), and Leader returns a
//     Member with Inferred set, Meta.HTTPAddr = that address, Meta.Term =
//     that term, Meta.NodeID = the leader id those reports name, and
//     Name/Addr/other Meta copied from a live member of the shard with that
//     NodeID or HTTP address if there is one.
//
// Term ordering is what makes a deposed leader that has not yet noticed
// (or whose "follower" update has not yet spread) lose to the new one.
func (p *Pool) Leader(shardID string) (Member, bool) {
	return pickLeader(p.Members(), shardID)
}

// pickLeader implements Leader over a member list sorted by Name.
func pickLeader(ms []Member, shardID string) (Member, bool) {
	var (
		claim      Member
		haveClaim  bool
		reportTerm uint64
		haveReport bool
		votes      = map[string]int{}    // LeaderHTTP -> reports at reportTerm
		leaderIDs  = map[string]string{} // LeaderHTTP -> first leader id named for it
	)
	for _, m := range ms {
		if m.Meta.Role != RoleShard || m.Meta.ShardID != shardID {
			continue
		}
		if m.Meta.RaftState == StateLeader {
			if !haveClaim || m.Meta.Term > claim.Meta.Term ||
				(m.Meta.Term == claim.Meta.Term && m.Name < claim.Name) {
				claim, haveClaim = m, true
			}
		}
		if m.Meta.LeaderHTTP == "" {
			continue
		}
		switch {
		case !haveReport || m.Meta.Term > reportTerm:
			reportTerm, haveReport = m.Meta.Term, true
			votes = map[string]int{m.Meta.LeaderHTTP: 1}
			leaderIDs = map[string]string{m.Meta.LeaderHTTP: m.Meta.Leader}
		case m.Meta.Term == reportTerm:
			votes[m.Meta.LeaderHTTP]++
			if leaderIDs[m.Meta.LeaderHTTP] == "" {
				leaderIDs[m.Meta.LeaderHTTP] = m.Meta.Leader
			}
		}
	}
	if haveClaim && (!haveReport || claim.Meta.Term >= reportTerm) {
		return claim, true
	}
	if !haveReport {
		return Member{}, false
	}

	var addr string
	best := 0
	for a, n := range votes {
		if n > best || (n == best && a < addr) {
			addr, best = a, n
		}
	}
	id := leaderIDs[addr]
	out := Member{Inferred: true, Meta: Meta{Role: RoleShard, ShardID: shardID}}
	for _, m := range ms {
		if m.Meta.Role != RoleShard || m.Meta.ShardID != shardID {
			continue
		}
		if (id != "" && m.Meta.NodeID == id) || m.Meta.HTTPAddr == addr {
			out.Name, out.Addr, out.Meta = m.Name, m.Addr, m.Meta
			break
		}
	}
	if id != "" {
		out.Meta.NodeID = id
	}
	out.Meta.RaftState = StateLeader
	out.Meta.Term = reportTerm
	out.Meta.Leader = out.Meta.NodeID
	out.Meta.LeaderHTTP = addr
	out.Meta.HTTPAddr = addr
	return out, true
}

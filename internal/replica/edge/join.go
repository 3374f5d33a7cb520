package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/wire"
)

const (
	joinPace     = 500 * time.Millisecond // between rounds of asking: the wall clock paces network attempts
	askWait      = 15 * time.Second       // one member's answer to an add (it forwards to its leader)
	asLeaderWait = 2 * time.Second        // one member's answer to Removed's question
)

// Join asks the group to add this node as r says (POST
// /internal/v1/members), and asks again each round until a member
// accepts, a leader reaches this node (someone added it already), or ctx
// ends. Each round asks the HTTP addresses targets gives, in order, but
// this node's own: any member will do, since a follower forwards the
// change to its leader.
func (g *Group) Join(ctx context.Context, r wire.AddMemberRequest, targets func() []string) error {
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	var last error
	for {
		node, release, err := g.cfg.Node()
		if err != nil {
			return err
		}
		led := node.LeaderID() != ""
		release()
		if led {
			return nil
		}
		for _, addr := range g.joinTargets(targets()) {
			if _, last = g.callMembers(addr, body, askWait); last == nil {
				return nil
			}
		}
		if last == nil {
			last = fmt.Errorf("no member of %s is known yet", g.cfg.Group)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: join %s: %w (last: %v)", g.cfg.Name, g.cfg.Group, ctx.Err(), last)
		case <-time.After(joinPace):
		}
	}
}

// joinTargets is addrs as host:port, without repeats or this node.
func (g *Group) joinTargets(addrs []string) []string {
	var out []string
	seen := map[string]bool{g.cfg.Advertised(): true}
	for _, a := range addrs {
		a = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(a, "http://"), "https://"), "/")
		if a != "" && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// Peer is another member as a node's discovery knows it.
type Peer struct{ NodeID, HTTPAddr string }

// Removed asks the group's leader, found among peers, whether its
// configuration still lists this node. Raft does not always tell a member
// it removed: the leader stops replicating to it at once, and the entry
// that removes it may never be sent. A node that lost its leader asks
// instead. Only the leader's answer counts: a lagging follower may not
// know of a recent add.
func (g *Group) Removed(peers []Peer) bool {
	for _, p := range peers {
		if p.NodeID == g.cfg.NodeID || p.HTTPAddr == "" {
			continue
		}
		list, err := g.callMembers(p.HTTPAddr, nil, asLeaderWait)
		if err != nil || list.LeaderID != p.NodeID {
			continue // not the leader, or it did not answer
		}
		return !slices.ContainsFunc(list.Members, func(m wire.Member) bool { return m.NodeID == g.cfg.NodeID })
	}
	return false
}

// callMembers calls /internal/v1/members on the member at addr, a GET or,
// with a body, a POST (an add), and returns the member list it answers.
func (g *Group) callMembers(addr string, body []byte, wait time.Duration) (wire.MemberList, error) {
	var list wire.MemberList
	node, err := g.cfg.Peers.Node(addr)
	if err != nil {
		return list, err
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("/internal/v1/members")
	if body != nil {
		req.Header.SetMethod(fasthttp.MethodPost)
		req.Header.SetContentType("application/json")
		req.SetBody(body)
	}
	if err := node.Do(req, resp, time.Now().Add(wait)); err != nil { // a network deadline: the wall clock
		return list, err
	}
	if resp.StatusCode() != fasthttp.StatusOK {
		var b wire.ErrorBody
		if json.Unmarshal(resp.Body(), &b) == nil && b.Error != nil {
			return list, fmt.Errorf("%s: %d %s", addr, resp.StatusCode(), b.Error.Message)
		}
		return list, fmt.Errorf("%s: status %d", addr, resp.StatusCode())
	}
	if err := json.Unmarshal(resp.Body(), &list); err != nil {
		return list, fmt.Errorf("%s: member list: %w", addr, err)
	}
	return list, nil
}

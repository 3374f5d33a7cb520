package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica/edge"
	"github.com/jobbie/jobbie/internal/shardclient"
)

// Forwarding (internal/replica/edge, as on a shard): a follower proxies
// the whole request to the leader, which runs the same handler, so writes
// (and every read whose staleness matters) are answered by the leader; a
// backup download's answer is streamed back as it comes.
//
// Served by any node from its own state, where a moment's staleness is
// harmless: the JWKS (a gateway fetches again on an unknown kid), the
// revocation list (polled every second, versioned: a follower's answer
// trails the leader's by the replication delay), health, metrics and the
// node's own status and member list. Everything else is the leader's.
// A follower that knows no leader (cut off from the majority, which may
// be revoking keys) does not serve the revocation list (edge.ByFollower):
// a gateway must see it age and, past its freshness bound, refuse keys.
//
// An internal caller is identified by its certificate; the leader cannot
// see the certificate a follower was reached with, so the follower, once
// it admitted the caller (Group.Gate), names it in callerHeader, which the
// leader believes only from a control certificate. An operator's key
// travels as sent: the leader checks it.
const (
	forwardedHeader = "X-Jobbie-Control-Forwarded" // the forwarding node's id
	callerHeader    = "X-Jobbie-Control-Peer"      // the identity the follower admitted
)

// newGroup is this node's edge of the control group.
func (s *Server) newGroup(peers *shardclient.Client) *edge.Group {
	members := pki.Roles(pki.RoleControl)
	return edge.New(edge.Config{
		Name: "control", Group: "the control group", NodeID: s.cfg.NodeID,
		Node: s.Acquire, Advertised: s.cfg.AdvertisedHTTP, HTTPOf: s.MemberHTTP,
		Peers: peers, Logger: s.log,
		ForwardedHeader: forwardedHeader, CallerHeader: callerHeader, Members: members,
		Streamed: func(c *fiber.Ctx) bool { return isDownload(&c.Request().Header) }, StreamTLS: s.cfg.TLS.Client(members),
		NoLeader: "the control plane has no leader this node can reach; retry shortly",
		Leader:   "the control leader",
		CheckAdd: checkAdd, Added: s.recordMemberHTTP,
	})
}

// newPeers is how a node reaches the other control nodes: their
// certificates must be control's.
func newPeers(cfg Config) *shardclient.Client {
	return shardclient.New(shardclient.Config{Name: "jobbie-control", TLS: cfg.TLS, NodePolicy: pki.Roles(pki.RoleControl),
		MaxConns: 64, NoLink: true, Logger: cfg.Logger})
}

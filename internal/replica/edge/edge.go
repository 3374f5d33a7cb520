package edge

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/wire"
)

// Config is one node's edge. Node, Advertised, HTTPOf, Peers,
// ForwardedHeader, CheckAdd and the messages are required; other zero
// values take the defaults in comments.
type Config struct {
	// Name prefixes logs and errors: "shard", "control".
	Name string
	// Group names the group in a failed join's error: "shard s1", "the
	// control group".
	Group string
	// NodeID is this node's Raft id; a forward names it in
	// ForwardedHeader.
	NodeID string
	// ShardID and Version, when set, are in the status and member list.
	ShardID, Version string

	// Node returns the running node and a release function, or the error
	// to answer while there is none (Fixed: a node that is always there).
	Node func() (*replica.Node, func(), error)
	// Advertised is where this node serves HTTP, for its peers.
	Advertised func() string
	// HTTPOf is where member id (not this node) serves HTTP, when known:
	// from gossip, or the group's replicated state.
	HTTPOf func(node *replica.Node, id string) (string, bool)
	// Peers reaches the other members: forwards and joins. Its node
	// policy is the group's certificates; its owner closes it.
	Peers *shardclient.Client
	// Logger defaults to slog.Default().
	Logger *slog.Logger

	// ForwardedHeader marks a forwarded request with the forwarding
	// node's id: a node forwards once. Required.
	ForwardedHeader string
	// CallerHeader, when set, makes the caller travel with a forward: its
	// Authorization header as sent, and the identity Gate admitted,
	// named in this header, which the leader believes only from a caller
	// that Members admits. Unset, the forwarding node speaks for itself:
	// Authorization is dropped and the leader judges the forwarding
	// node's certificate.
	CallerHeader string
	Members      pki.Policy
	// ReadYourWrites: the leader names its applied index in a forwarded
	// request's answer (wire.AppliedHeader) and the follower applies that
	// far (up to 2 s) before it answers, so a caller that writes and then
	// reads through the same follower reads its write.
	ReadYourWrites bool
	// Timeout bounds a forward by its request; default 30 s for all.
	Timeout func(c *fiber.Ctx) time.Duration
	// After, when set, sees a forward's answer before the caller does.
	After func(c *fiber.Ctx, leader string, answer *fasthttp.Response)
	// Streamed picks the reads whose answers are streamed back as they
	// arrive rather than read whole (larger than memory, longer than
	// Timeout to send); StreamTLS is the client side of their TLS.
	Streamed  func(c *fiber.Ctx) bool
	StreamTLS *tls.Config

	// The messages of a forward that cannot be made: NoLeader while no
	// leader is known (and for a forwarded request that reached a node
	// that does not lead); Unreachable when the leader could not be
	// reached (default NoLeader); Leader names the leader in "… did not
	// answer".
	NoLeader, Unreachable, Leader string

	// CheckAdd checks a membership request's fields (400 with the field).
	CheckAdd func(wire.AddMemberRequest) error
	// Added, when set, runs on the leader once a member was added.
	Added func(ctx context.Context, r wire.AddMemberRequest) error
}

// Group is one node's edge of its Raft group: forwarding to the leader,
// the status and members API, and joining.
type Group struct {
	cfg    Config
	log    *slog.Logger
	stream *http.Client // streamed forwards; nil without Config.Streamed
}

// New returns the edge of cfg.
func New(cfg Config) *Group {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Unreachable == "" {
		cfg.Unreachable = cfg.NoLeader
	}
	if cfg.Timeout == nil {
		cfg.Timeout = func(*fiber.Ctx) time.Duration { return forwardTimeout }
	}
	g := &Group{cfg: cfg, log: cfg.Logger}
	if cfg.Streamed != nil {
		g.stream = &http.Client{Transport: &http.Transport{
			TLSClientConfig:       cfg.StreamTLS,
			DialContext:           (&net.Dialer{Timeout: dialTimeout}).DialContext,
			TLSHandshakeTimeout:   dialTimeout,
			ResponseHeaderTimeout: forwardTimeout, // the leader must start answering in time
			IdleConnTimeout:       30 * time.Second,
		}}
	}
	return g
}

const (
	forwardTimeout = 30 * time.Second
	dialTimeout    = 2 * time.Second
)

// Close drops the idle connections of streamed forwards.
func (g *Group) Close() {
	if g.stream != nil {
		g.stream.CloseIdleConnections()
	}
}

// Fixed is Config.Node for a node that is there for the edge's life.
func Fixed(n *replica.Node) func() (*replica.Node, func(), error) {
	return func() (*replica.Node, func(), error) { return n, func() {}, nil }
}

// LeaderHTTP is the leader's HTTP address: Raft names the leader, and
// Config.HTTPOf says where it serves. The address is only a hint: a
// forward admits nothing but the group's certificates at the other end.
func (g *Group) LeaderHTTP(node *replica.Node) (string, bool) {
	return g.httpOf(node, node.LeaderID())
}

// httpOf is where member id serves HTTP.
func (g *Group) httpOf(node *replica.Node, id string) (string, bool) {
	switch id {
	case "":
		return "", false
	case g.cfg.NodeID:
		return g.cfg.Advertised(), true
	}
	return g.cfg.HTTPOf(node, id)
}

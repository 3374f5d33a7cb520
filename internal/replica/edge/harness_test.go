package edge_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/gofiber/fiber/v2"
	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/leakcheck"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/internal/replica/edge"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/wire"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// The test group's members are control nodes by their certificates; its
// callers are gateways and operators.
var members = pki.Roles(pki.RoleControl)

const (
	forwardedHeader = "X-Test-Forwarded"
	callerHeader    = "X-Test-Caller"
	streamSize      = 1 << 20 // more than the peers read whole (maxWhole)
	maxWhole        = 64 << 10
)

type put struct {
	Key, Value string
}

var opPut = replica.Op[put, replica.None]{Type: 1, Name: "put"}

func registry() *replica.Registry {
	r := new(replica.Registry)
	opPut.Handle(r, func(tx *replica.Tx, c *put) (replica.None, error) {
		return replica.None{}, tx.Set([]byte(c.Key), []byte(c.Value), nil)
	})
	return r
}

// member is one node of the test group: a real replica, its edge and an
// HTTP server over mutual TLS on loopback.
type member struct {
	id    string
	node  *replica.Node
	group *edge.Group
	addr  string
	hits  sync.Map // path → *atomic.Int64: requests its handlers ran
}

func (m *member) ran(path string) int64 {
	v, _ := m.hits.LoadOrStore(path, new(atomic.Int64))
	return v.(*atomic.Int64).Load()
}

func (m *member) count(path string) {
	v, _ := m.hits.LoadOrStore(strings.Clone(path), new(atomic.Int64)) // fiber's strings live in its buffers
	v.(*atomic.Int64).Add(1)
}

// cluster is a group of real members; addrs is where each serves HTTP as
// the members' HTTPOf finds it (a test may point one elsewhere).
type cluster struct {
	t     *testing.T
	ca    *pkitest.CA
	base  string
	mu    sync.Mutex
	addrs map[string]string
	nodes map[string]*member
	opts  []func(*edge.Config)
}

// setup starts a group of two: n1 leads, n2 follows.
func setup(t *testing.T, opts ...func(*edge.Config)) (*cluster, *member, *member) {
	t.Helper()
	c := &cluster{t: t, ca: pkitest.New(t), base: t.TempDir(), addrs: map[string]string{}, nodes: map[string]*member{}, opts: opts}
	leader := c.start("n1", true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, leader.node.WaitLeader(ctx))
	follower := c.start("n2", false)
	require.NoError(t, leader.node.AddVoter(ctx, "n2", follower.node.RaftAddr()))
	// An entry after the configuration's: once the follower applied it,
	// it knows the leader and both members.
	_, err := opPut.Propose(ctx, leader.node, &put{Key: "setup", Value: "done"})
	require.NoError(t, err)
	require.NoError(t, follower.node.WaitApplied(ctx, leader.node.AppliedIndex()))
	waitFor(t, follower.node, func() bool { return follower.node.LeaderID() == "n1" })
	return c, leader, follower
}

// start opens member id and serves its API.
func (c *cluster) start(id string, bootstrap bool) *member {
	t := c.t
	node, err := replica.Open(replica.Config{Dir: filepath.Join(c.base, id), NodeID: id, Bootstrap: bootstrap, CacheSize: 8 << 20,
		// Timeouts a loaded machine does not miss: no test here fails a leader
		// over, and a lost leadership answers 503 where a test wants the leader.
		HeartbeatTimeout: time.Second, ElectionTimeout: time.Second, Logger: hclog.NewNullLogger()}, registry())
	require.NoError(t, err)
	creds := c.ca.Creds(t, pki.Identity{Role: pki.RoleControl, Node: id})
	peers := shardclient.New(shardclient.Config{TLS: creds, NodePolicy: members, MaxResponseBody: maxWhole})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	m := &member{id: id, node: node, addr: ln.Addr().String()}
	c.mu.Lock()
	c.addrs[id], c.nodes[id] = m.addr, m
	c.mu.Unlock()
	cfg := edge.Config{Name: "test", Group: "the test group", NodeID: id, Node: edge.Fixed(node),
		Advertised: func() string { return m.addr },
		HTTPOf: func(_ *replica.Node, other string) (string, bool) {
			c.mu.Lock()
			defer c.mu.Unlock()
			a, ok := c.addrs[other]
			return a, ok
		},
		Peers: peers, ForwardedHeader: forwardedHeader, CallerHeader: callerHeader, Members: members, ReadYourWrites: true,
		Streamed: func(c *fiber.Ctx) bool { return c.Path() == "/big" }, StreamTLS: creds.Client(members),
		NoLeader: "no leader here", Unreachable: "the leader is unreachable", Leader: "the test leader",
		CheckAdd: func(r wire.AddMemberRequest) error {
			if r.NodeID == "" {
				return apierr.Field("node_id", "node_id is required")
			}
			return nil
		},
	}
	for _, o := range c.opts {
		o(&cfg)
	}
	m.group = edge.New(cfg)
	app := m.app()
	go func() { _ = app.Listener(tls.NewListener(ln, creds.ServerCertOptional())) }()
	t.Cleanup(func() {
		_ = app.ShutdownWithTimeout(5 * time.Second)
		m.group.Close()
		peers.Close()
		_ = node.Close()
	})
	return m
}

// stop stops member id's node: its HTTP server keeps serving.
func (c *cluster) stop(id string) { require.NoError(c.t, c.nodes[id].node.Close()) }

func (m *member) app() *fiber.App {
	app := fiber.New(fiber.Config{ErrorHandler: apierr.Handler, DisableStartupMessage: true})
	app.Use(apierr.RequestID)
	g := m.group
	anyNode := func(*fiber.Ctx) edge.Serve { return edge.ByAny }
	following := func(*fiber.Ctx) edge.Serve { return edge.ByFollower }
	app.Post("/put", g.Forward(nil), m.put)
	app.Put("/put", g.Forward(nil), m.put)
	app.Get("/read/:key", g.Forward(anyNode), m.read)
	app.Get("/following/:key", g.Forward(following), m.read)
	app.Post("/hangup", g.Forward(nil), m.hangUp)
	app.Put("/hangup", g.Forward(nil), m.hangUp)
	app.Get("/big", g.Forward(nil), m.big)
	app.Get("/open", g.Gate(nil, edge.ByLeader), m.who)
	app.Get("/gateways", g.Gate(pki.Roles(pki.RoleGateway), edge.ByLeader), m.who)
	app.Get("/operators", g.Gate(pki.Roles(pki.RoleOperator), edge.ByLeader), m.who)
	app.Get("/leader-only", g.LeaderOnly, func(c *fiber.Ctx) error { return c.SendString(m.id) })
	g.Routes(app, pki.Require(members, nil))
	return app
}

func (m *member) put(c *fiber.Ctx) error {
	m.count(c.Path())
	var p put
	if err := json.Unmarshal(c.Body(), &p); err != nil {
		return apierr.New(apierr.BadRequest, "%v", err)
	}
	if _, err := opPut.Propose(c.UserContext(), m.node, &p); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"node": m.id})
}

func (m *member) read(c *fiber.Ctx) error {
	m.count("/read")
	v, closer, err := m.node.DB().Get([]byte(c.Params("key")))
	if err == pebble.ErrNotFound {
		return apierr.New(apierr.NotFound, "no such key")
	}
	if err != nil {
		return err
	}
	defer closer.Close()
	return c.JSON(fiber.Map{"node": m.id, "value": string(v)})
}

// hangUp closes the connection without an answer, after the request
// reached the handler: as a leader that died applying it.
func (m *member) hangUp(c *fiber.Ctx) error {
	m.count(c.Method() + " " + c.Path())
	return c.Context().Conn().Close()
}

func (m *member) big(c *fiber.Ctx) error {
	m.count(c.Path())
	c.Set("X-Test-Node", m.id)
	c.Set(fiber.HeaderContentType, "application/octet-stream")
	return c.SendStream(strings.NewReader(strings.Repeat("x", streamSize)), streamSize)
}

func (m *member) who(c *fiber.Ctx) error {
	m.count(c.Path())
	caller := ""
	if id := edge.Caller(c); id.Role != "" {
		caller = id.String()
	}
	return c.JSON(fiber.Map{"node": m.id, "caller": caller, "header": c.Get(callerHeader),
		"authorization": c.Get(fiber.HeaderAuthorization)})
}

// waitFor waits until ok holds, woken by node's leadership changes.
func waitFor(t *testing.T, node *replica.Node, ok func() bool) {
	t.Helper()
	changes, cancel := node.Subscribe()
	defer cancel()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for !ok() {
		select {
		case <-changes:
		case <-deadline.C:
			t.Fatal("gave up waiting")
		}
	}
}

// answer is an HTTP answer read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

var jsonUnmarshal = json.Unmarshal

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var out map[string]any
	require.NoError(t, json.Unmarshal(a.body, &out), "body: %s", a.body)
	return out
}

// errorOf is the error an answer carries.
func (a answer) errorOf(t *testing.T) *wire.Error {
	t.Helper()
	var b wire.ErrorBody
	require.NoError(t, json.Unmarshal(a.body, &b), "body: %s", a.body)
	require.NotNil(t, b.Error, "body: %s", a.body)
	return b.Error
}

// call sends a request to m as who (no certificate for a zero who), with
// header pairs kv.
func (c *cluster) call(m *member, who pki.Identity, method, path, body string, kv ...string) answer {
	c.t.Helper()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: c.ca.Anonymous(c.t)}}
	if who.Role != "" {
		client = c.ca.HTTPClient(c.t, who, members)
	}
	defer client.CloseIdleConnections()
	req, err := http.NewRequest(method, "https://"+m.addr+path, strings.NewReader(body))
	require.NoError(c.t, err)
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	resp, err := client.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return answer{status: resp.StatusCode, header: resp.Header, body: b}
}

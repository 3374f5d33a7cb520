package fuzz

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/internal/tunnel"
	"github.com/jobbie/jobbie/shard"
	"github.com/jobbie/jobbie/shard/trust"
)

// A self-hosted node's trust bundle, pushed by a hosted gateway over the
// node's tunnel (its own listener admits only its cluster's nodes):
// whatever the body, the answer is 204 or a 4xx with the error shape, and
// a bundle the node took is the one it reads back from its file after a
// restart.

var (
	trustOnce sync.Once
	trustNode *shard.Node
	trustDir  string
	trustURL  string
	trustGW   *http.Client // the gateway's end of the node's tunnel
)

const trustTenant = "t_01hx0000000000000000000000"

func startSelfHosted(t *testing.T) {
	trustOnce.Do(func() {
		var err error
		if trustDir, err = os.MkdirTemp("", "jobbie-fuzz-trust-"); err != nil {
			t.Fatal(err)
		}
		ca := pkitest.New(t)
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		creds := ca.Creds(t, pkitest.TenantShard("s9", "n1", trustTenant))
		n, err := shard.New(shard.Config{DataDir: trustDir, HTTPAddr: "127.0.0.1:0", Bootstrap: true, ShardID: "s9", NodeID: "n1",
			TLS: creds, Fast: true, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := n.WaitLeader(ctx); err != nil {
			t.Fatal(err)
		}
		closeTunnel, err := serveOverTunnel(ctx, t, n, ca, creds, log)
		if err != nil {
			t.Fatal(err)
		}
		tr := &http.Transport{DialContext: closeTunnel.dial}
		trustGW = &http.Client{Transport: tr, Timeout: 30 * time.Second}
		trustNode, trustURL = n, "http://n1"
		stops = append(stops, func() { tr.CloseIdleConnections(); closeTunnel.close(); _ = n.Stop(); _ = os.RemoveAll(trustDir) })
	})
	if trustNode == nil {
		t.Fatal("the self-hosted node did not start")
	}
}

func FuzzTrustBundle(f *testing.F) {
	good := `{"tenant_id":"` + trustTenant + `","shard_id":"s9","issued_at":"2026-11-25T00:00:00Z",` +
		`"jwks":{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]},` +
		`"revocations":{"version":1,"revoked":["key_01hx0000000000000000000000"]},"roles":{"version":1,"roles":[]},` +
		`"namespaces":[{"name":"default","shard_id":"s9"}]}`
	seeds(f, good, `{"tenant_id":"`+trustTenant+`","shard_id":"s9","jwks":{"keys":[{"kty":"EC"}]}}`,
		`{"tenant_id":"t_other","shard_id":"s9"}`, `{"tenant_id":"`+trustTenant+`","shard_id":"s9","jwks":null}`, `[]`, `{`)
	f.Fuzz(func(t *testing.T, body []byte) {
		startSelfHosted(t)
		status, raw := post(t, trustGW, trustURL+"/internal/v1/trust", body)
		if string(body) == good && status != http.StatusNoContent {
			t.Fatalf("a good bundle is refused: %d %s", status, raw)
		}
		if status != http.StatusNoContent {
			return
		}
		held, _, ok := trustNode.TrustBundle()
		if !ok {
			t.Fatal("204, but the node holds no bundle")
		}
		again, err := trust.Open(filepath.Join(trustDir, trust.FileName))
		if err != nil || again.Discarded() != nil {
			t.Fatalf("the bundle taken does not read back from its file: %v %v", err, again.Discarded())
		}
		back, _, _ := again.Latest()
		a, _ := json.Marshal(held)
		b, _ := json.Marshal(back)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("the file holds %s, the node %s", b, a)
		}
	})
}

// gatewayEnd is the hosted end of a node's tunnel: a registry with a
// gateway's certificate that the node's agent dialed.
type gatewayEnd struct {
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	close func()
}

// serveOverTunnel has n dial a tunnel registry on loopback and serve its
// API there, as a self-hosted node serves the hosted gateways, and waits
// until the tunnel is up or ctx ends.
func serveOverTunnel(ctx context.Context, t testing.TB, n *shard.Node, ca *pkitest.CA, creds *pki.Credentials, log *slog.Logger) (*gatewayEnd, error) {
	reg, err := tunnel.NewRegistry(tunnel.RegistryConfig{TLS: ca.Creds(t, pkitest.Gateway), Logger: log})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	served := make(chan struct{})
	go func() { _ = reg.Serve(ln); close(served) }()
	agent, err := tunnel.NewAgent(tunnel.AgentConfig{Addr: ln.Addr().String(), TLS: creds,
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Logger: log})
	if err != nil {
		_ = reg.Close()
		<-served
		return nil, err
	}
	actx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { _ = agent.Run(actx); close(ran) }()
	end := &gatewayEnd{dial: reg.NodeDialer(creds.Identity().Shard, creds.Identity().Node),
		close: func() { stop(); <-ran; _ = reg.Close(); <-served }}
	n.Serve(agent.Listener())
	id := creds.Identity()
	for {
		changed := reg.Changed() // taken before the state is read
		if reg.Connected(id.Shard, id.Node) {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
			end.close()
			return nil, fmt.Errorf("the node's tunnel did not come up: %w", ctx.Err())
		}
	}
	return end, nil
}

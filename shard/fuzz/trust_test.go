package fuzz

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/shard"
	"github.com/jobbie/jobbie/shard/trust"
)

// A self-hosted node's trust bundle, pushed by a hosted gateway: whatever
// the body, the answer is 204 or a 4xx with the error shape, and a bundle
// the node took is the one it reads back from its file after a restart.

var (
	trustOnce sync.Once
	trustNode *shard.Node
	trustDir  string
	trustURL  string
	trustGW   *http.Client
)

const trustTenant = "t_01hx0000000000000000000000"

func startSelfHosted(t *testing.T) {
	trustOnce.Do(func() {
		var err error
		if trustDir, err = os.MkdirTemp("", "jobbie-fuzz-trust-"); err != nil {
			t.Fatal(err)
		}
		ca := pkitest.New(t)
		trustGW = ca.HTTPClient(t, pkitest.Gateway, nil)
		n, err := shard.New(shard.Config{DataDir: trustDir, HTTPAddr: "127.0.0.1:0", Bootstrap: true, ShardID: "s9", NodeID: "n1",
			TLS: ca.Creds(t, pkitest.TenantShard("s9", "n1", trustTenant)), Fast: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
		trustNode, trustURL = n, "https://"+n.Addr()
		stops = append(stops, func() { _ = n.Stop(); _ = os.RemoveAll(trustDir); trustGW.CloseIdleConnections() })
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

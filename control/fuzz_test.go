package control

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// Control's APIs fuzzed through a real node: whatever the body, every
// decoding route answers 2xx or 4xx with the error shape, never a 5xx,
// and the node keeps serving. One node serves a whole target; each input
// goes to every route of its API.

// fuzzNode is a started control node and its callers.
type fuzzNode struct {
	base     string
	op       string       // an operator key
	tid      string       // a tenant's id
	operator *http.Client // no certificate, as the CLI
	gateway  *http.Client // a gateway's certificate
	anyone   *http.Client // no certificate: joins and renewals
}

func startFuzzNode(f *testing.F) *fuzzNode {
	ca := pkitest.New(f)
	cfg := Config{DataDir: f.TempDir(), HTTPAddr: "127.0.0.1:0", TLS: ca.Creds(f, pkitest.Control), Shards: testShards,
		Logger: slog.New(slog.DiscardHandler), RaftTimeout: 50 * time.Millisecond,
		SelfHostedCA: pkitest.New(f).CA, SelfHostedCertValidity: time.Hour}
	srv, err := New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Start(ctx); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = srv.Stop() })
	op, err := srv.IssueOperatorKey(ctx, "ops")
	if err != nil {
		f.Fatal(err)
	}
	ten, err := srv.CreateTenant(ctx, "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	plain := clientWith(ca.Anonymous(f))
	gw := clientWith(ca.Creds(f, pki.Identity{Role: pki.RoleGateway, Node: "g1"}).Client(pki.Roles(pki.RoleControl)))
	return &fuzzNode{base: "https://" + srv.Addr(), op: op, tid: ten.Tenant.ID, operator: plain, gateway: gw, anyone: plain}
}

// check sends body and fails on a 5xx, on an answer that is not JSON
// (but an empty one), or on a 4xx without the error shape.
func (n *fuzzNode) check(t *testing.T, c *http.Client, token, method, path string, body []byte) {
	req, err := http.NewRequest(method, n.base+strings.ReplaceAll(path, ":tid", n.tid), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 500 {
		t.Fatalf("%s %s %q: %d %s", method, path, body, resp.StatusCode, raw)
	}
	if len(raw) == 0 {
		return
	}
	if !json.Valid(raw) {
		t.Fatalf("%s %s %q: %d answered with invalid JSON %q", method, path, body, resp.StatusCode, raw)
	}
	if resp.StatusCode >= 400 {
		var e wire.ErrorBody
		if json.Unmarshal(raw, &e) != nil || e.Error == nil || e.Error.Code == "" {
			t.Fatalf("%s %s %q: %d without the error shape: %s", method, path, body, resp.StatusCode, raw)
		}
	}
}

type route struct{ method, path string }

func FuzzOperatorAPI(f *testing.F) {
	for _, b := range []string{`{"name":"acme"}`, `{"name":"pro","limits":{"requests_per_second":10,"max_queues":5}}`,
		`{"plan":"pro"}`, `{"to_shard":"s2"}`, `{"name":""}`, `{"limits":{"requests_per_second":-1}}`, `[]`, `{`} {
		f.Add([]byte(b))
	}
	n := startFuzzNode(f)
	routes := []route{
		{http.MethodPost, "/control/v1/tenants"},
		{http.MethodPost, "/control/v1/plans"},
		{http.MethodPut, "/control/v1/plans/fuzzed"},
		{http.MethodPut, "/control/v1/tenants/:tid/plan"},
		{http.MethodPost, "/control/v1/namespaces/:tid/default/move"},
		{http.MethodPost, "/control/v1/signing-keys/rotate"},
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, r := range routes {
			n.check(t, n.operator, n.op, r.method, r.path, body)
		}
	})
}

func FuzzInternalAPI(f *testing.F) {
	for _, b := range []string{`{"name":"emails"}`, `{"name":"w","role":"developer","namespaces":["default"]}`,
		`{"name":"reader","permissions":[{"actions":["job.read"],"namespaces":["*"],"queues":["*"]}]}`,
		`{"keys":[{"id":"key_01hx0000000000000000000000","at":"2026-11-28T00:00:00Z"}]}`, `{"schedule":"@every 0s","retain":3}`,
		`{"name":"own","nodes":3}`, `{"mode":"new","namespace":"copy"}`, `{"requests":[{"tenant_id":"x","count":-1}]}`, `null`} {
		f.Add([]byte(b))
	}
	n := startFuzzNode(f)
	routes := []route{
		{http.MethodPost, "/internal/v1/tenants/:tid/namespaces"},
		{http.MethodPatch, "/internal/v1/tenants/:tid/namespaces/default"},
		{http.MethodPost, "/internal/v1/tenants/:tid/keys"},
		{http.MethodPost, "/internal/v1/keys/used"},
		{http.MethodPost, "/internal/v1/tenants/:tid/roles"},
		{http.MethodPut, "/internal/v1/tenants/:tid/roles/fuzzed"},
		{http.MethodPost, "/internal/v1/usage/api-requests"},
		{http.MethodPost, "/internal/v1/tenants/:tid/backups"},
		{http.MethodPost, "/internal/v1/tenants/:tid/backups/bk_01hx0000000000000000000000/restore"},
		{http.MethodPut, "/internal/v1/tenants/:tid/namespaces/default/backup-policy"},
		{http.MethodPost, "/internal/v1/tenants/:tid/shards/join-tokens"},
		{http.MethodPost, "/internal/v1/tenants/:tid/shards/sh_x/join-tokens"},
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, r := range routes {
			n.check(t, n.gateway, "", r.method, r.path, body)
		}
	})
}

// FuzzJoin: the routes anyone on the network may call (a joining node has
// no certificate yet).
func FuzzJoin(f *testing.F) {
	for _, b := range []string{`{"token":"jt_x","csr":"-----BEGIN CERTIFICATE REQUEST-----\nAA==\n-----END CERTIFICATE REQUEST-----\n"}`,
		`{"certificate":"","csr":""}`, `{"token":""}`, `""`, `{`} {
		f.Add([]byte(b))
	}
	n := startFuzzNode(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		n.check(t, n.anyone, "", http.MethodPost, "/control/v1/join", body)
		n.check(t, n.anyone, "", http.MethodPost, "/control/v1/join/renew", body)
	})
}

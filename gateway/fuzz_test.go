package gateway

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// FuzzAdminBodies: the tenant-administration bodies a gateway decodes
// itself before asking control (namespaces, backup policies, backups and
// restores, keys, roles, self-hosted shards), sent by an owner's key:
// whatever the body, a 2xx or a 4xx with the error shape, never a 5xx.
func FuzzAdminBodies(f *testing.F) {
	for _, b := range []string{`{"name":"billing"}`, `{"description":"x"}`, `{"schedule":"@every 1h","retain":3}`,
		`{"schedule":"@every 0s"}`, `{"namespace":"default"}`, `{"mode":"new","namespace":"copy"}`,
		`{"name":"w","role":"developer","namespaces":["default"]}`,
		`{"name":"reader","permissions":[{"actions":["job.read"],"namespaces":["*"],"queues":["*"]}]}`,
		`{"name":"dc1","nodes":3}`, `{"nodes":-1}`, `[]`, `{`, `null`} {
		f.Add([]byte(b))
	}
	b := setup(f)
	owner := b.key(f, tenancy.RoleOwner, "*")
	routes := []struct{ method, path string }{
		{http.MethodPost, "/api/v1/namespaces"},
		{http.MethodPatch, "/api/v1/namespaces/default"},
		{http.MethodPut, "/api/v1/namespaces/default/backup-policy"},
		{http.MethodPost, "/api/v1/backups"},
		{http.MethodPost, "/api/v1/backups/bk_01hx0000000000000000000000/restore"},
		{http.MethodPost, "/api/v1/keys"},
		{http.MethodPost, "/api/v1/roles"},
		{http.MethodPut, "/api/v1/roles/fuzzed"},
		{http.MethodPost, "/api/v1/shards/join-tokens"},
		{http.MethodPost, "/api/v1/shards/sh_x/join-tokens"},
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, r := range routes {
			got := b.do(t, r.method, r.path, owner, body)
			if got.status >= 500 {
				t.Fatalf("%s %s %q: %d %s", r.method, r.path, body, got.status, got.body)
			}
			if got.status >= 400 {
				var e wire.ErrorBody
				if json.Unmarshal(got.body, &e) != nil || e.Error == nil || e.Error.Code == "" {
					t.Fatalf("%s %s %q: %d without the error shape: %s", r.method, r.path, body, got.status, got.body)
				}
			}
		}
	})
}

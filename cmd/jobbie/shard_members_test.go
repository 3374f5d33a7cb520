package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// A node that knows no leader yet has done nothing: the member commands
// ask again. Any other refusal is reported at once.
func TestShardAdminRetriesWhileNoLeader(t *testing.T) {
	var calls atomic.Int32
	var refuse atomic.Value
	refuse.Store("no_leader")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer 0123456789abcdef0123" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if calls.Add(1) <= 2 {
			code := refuse.Load().(string)
			status := map[string]int{"no_leader": 503, "not_found": 404}[code]
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"error":{"code":"` + code + `","message":"refused: ` + code + `"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"shard_id":"s1","leader_id":"n1","members":[{"node_id":"n1","raft_addr":"r1","http_addr":"h1","voter":true,"leader":true}]}`))
	}))
	defer srv.Close()
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("0123456789abcdef0123\n"), 0o600))
	a := &shardAdmin{url: srv.URL, secretFile: secret, output: outTable}

	var out strings.Builder
	require.NoError(t, a.do(context.Background(), http.MethodGet, "/internal/v1/members", nil, &out))
	require.EqualValues(t, 3, calls.Load(), "two refusals, then the answer")
	require.Contains(t, out.String(), "n1    leader")

	calls.Store(0)
	refuse.Store("not_found")
	err := a.send(context.Background(), http.MethodDelete, "/internal/v1/members/n9", nil, nil)
	require.EqualError(t, err, "DELETE /internal/v1/members/n9: refused: not_found (not_found)")
	require.EqualValues(t, 1, calls.Load(), "not retried")
}

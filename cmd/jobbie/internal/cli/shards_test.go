package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
	"github.com/jobbie/jobbie/wire"
)

// `jobbie shards`: each command's request, its table and JSON; bad input
// refused before any request; a 403 says which key is needed.
func TestShardsCommands(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		seen   []string
		forbid bool
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, strings.TrimSpace(r.Method+" "+r.URL.RequestURI()+" "+string(body)))
		no := forbid
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case no:
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"error":{"code":"forbidden","message":"API key key_1 has role \"admin\": only an owner key may mint shard join tokens"}}`)
		case r.Method == http.MethodGet:
			_, _ = io.WriteString(w, `{"shards":[{"id":"sh_1","name":"dc1","nodes":["n1","n2"],"expected_nodes":3,
				"namespaces":["onprem"],"created_at":"2026-11-01T10:00:00Z","connected":["n1"]}]}`)
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"token":"jst_abc","shard_id":"sh_1","name":"dc1","nodes":1,"expires_at":"2026-11-01T11:00:00Z"}`)
		}
	}))
	t.Cleanup(srv.Close)
	requests := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
	run := func(args ...string) (string, error) {
		out, _, err := runJobbie(t, "", append(append([]string{"shards"}, args...), "--url", srv.URL, "--key", "k")...)
		return out, err
	}

	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"create"}, "--name must be"},
		{[]string{"create", "--name", "dc", "--nodes", "6"}, "--nodes must be 1 to 5"},
		{[]string{"create", "--name", "dc", "--expires-in", "30s"}, "--expires-in must be 1m to 24h"},
		{[]string{"add-nodes", "sh_1!", "--nodes", "1"}, `shard id "sh_1!"`},
		{[]string{"add-nodes", "sh_1", "--nodes", "0"}, "--nodes must be 1 to 5"},
		{[]string{"add-nodes", "sh_1", "--expires-in", "25h"}, "--expires-in must be"},
		{[]string{"remove-node", "sh_1", "n/3"}, `node id "n/3"`},
		{[]string{"remove-node", "sh_1"}, "takes 2 arguments"},
		{[]string{"revoke", "sh 1"}, `shard id "sh 1"`},
	} {
		_, err := run(bad.args...)
		require.ErrorContains(t, err, bad.want, "%v", bad.args)
	}
	require.Empty(t, requests(), "refused before any request")

	out, err := run()
	require.NoError(t, err)
	require.Equal(t, []string{"sh_1", "dc1", "n1,n2", "(2/3)", "n1", "onprem", "-", "2026-11-01T10:00:00Z"}, clitest.TableRows(out)["sh_1 dc1"], out)
	out, err = run("-o", "json")
	require.NoError(t, err)
	var list []wire.OwnedShard
	require.NoError(t, json.Unmarshal([]byte(out), &list), out)
	require.Equal(t, []string{"n1", "n2"}, list[0].Nodes)

	out, err = run("add-nodes", "sh_1", "--nodes", "2", "--expires-in", "30m")
	require.NoError(t, err)
	require.Contains(t, out, "\njst_abc\n")
	out, err = run("create", "--name", "dc1", "--nodes", "3", "-o", "json")
	require.NoError(t, err)
	var tok wire.JoinToken
	require.NoError(t, json.Unmarshal([]byte(out), &tok), out)
	require.Equal(t, "jst_abc", tok.Token)
	out, err = run("remove-node", "sh_1", "n3")
	require.NoError(t, err)
	require.Contains(t, out, "node n3 removed from shard sh_1")
	require.Contains(t, out, "jobbie shard remove n3")
	out, err = run("revoke", "sh_1", "-o", "json")
	require.NoError(t, err)
	require.JSONEq(t, `{"id":"sh_1","deleted":true}`, out)
	require.Equal(t, []string{
		"GET /api/v1/shards",
		"GET /api/v1/shards",
		`POST /api/v1/shards/sh_1/join-tokens {"nodes":2,"expires_in":"30m"}`,
		`POST /api/v1/shards/join-tokens {"name":"dc1","expires_in":"1h","nodes":3}`,
		"DELETE /api/v1/shards/sh_1/nodes/n3",
		"DELETE /api/v1/shards/sh_1",
	}, requests())

	mu.Lock()
	forbid = true
	mu.Unlock()
	_, err = run("add-nodes", "sh_1")
	require.EqualError(t, err, `shard sh_1: 403 forbidden: API key key_1 has role "admin": only an owner key may mint shard join tokens (this needs a key of role owner)`)
	_, err = run()
	require.ErrorContains(t, err, "(this needs a key with namespace.read: ")
}

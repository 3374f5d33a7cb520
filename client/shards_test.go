package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// The shard node methods send what the API takes, to the shard's paths,
// decode what it answers, and return its refusals as API errors.
func TestShardNodeMethods(t *testing.T) {
	t.Parallel()
	type call struct{ method, path, body string }
	var calls []call
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		calls = append(calls, call{r.Method, r.URL.RequestURI(), string(bytes.TrimSpace(body))})
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/api/v1/shards/sh_1/nodes/n1":
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(wire.ErrorBody{Error: &wire.Error{Code: "conflict", Message: "node \"n1\" is shard \"sh_1\"'s last"}})
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(wire.JoinToken{Token: "jst_x", ShardID: "sh_1", Name: "dc1", Nodes: 2})
		}
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, "key")
	ctx := context.Background()

	tok, err := c.AddShardNodes(ctx, "sh_1", 2, 30*time.Minute)
	require.NoError(t, err)
	require.Equal(t, &client.JoinToken{Token: "jst_x", ShardID: "sh_1", Name: "dc1", Nodes: 2}, tok)
	_, err = c.AddShardNodes(ctx, "sh_1", 0, 0)
	require.NoError(t, err)
	require.NoError(t, c.RemoveShardNode(ctx, "sh_1", "n3"))
	err = c.RemoveShardNode(ctx, "sh_1", "n1")
	require.True(t, client.IsConflict(err), "%v", err)
	require.ErrorContains(t, err, "last")
	require.Equal(t, []call{
		{http.MethodPost, "/api/v1/shards/sh_1/join-tokens", `{"nodes":2,"expires_in":"30m"}`},
		{http.MethodPost, "/api/v1/shards/sh_1/join-tokens", `{}`},
		{http.MethodDelete, "/api/v1/shards/sh_1/nodes/n3", ""},
		{http.MethodDelete, "/api/v1/shards/sh_1/nodes/n1", ""},
	}, calls)
}

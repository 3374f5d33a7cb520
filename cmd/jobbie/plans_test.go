package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// opControl is a control plane in process and the operator flags that
// reach it. Its shards (ids) listen nowhere: ports 1, 2, ... of 127.0.0.1.
func opControl(t *testing.T, shards ...string) (*control.Server, []string) {
	t.Helper()
	ca := pkitest.New(t)
	infos := make([]control.ShardInfo, len(shards))
	for i, id := range shards {
		infos[i] = control.ShardInfo{ID: id, Addr: fmt.Sprintf("https://127.0.0.1:%d", i+1)}
	}
	srv, err := control.New(control.Config{DataDir: t.TempDir(), HTTPAddr: "127.0.0.1:0", TLS: ca.Creds(t, pkitest.Control),
		Logger: slog.New(slog.DiscardHandler), RaftTimeout: 50 * time.Millisecond, PullInterval: -1, Shards: infos})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, srv.Start(ctx))
	t.Cleanup(func() { require.NoError(t, srv.Stop()) })
	key, err := srv.IssueOperatorKey(ctx, "ops")
	require.NoError(t, err)
	dir := t.TempDir()
	keyFile, caFile := filepath.Join(dir, "operator.key"), filepath.Join(dir, "ca.crt")
	require.NoError(t, os.WriteFile(keyFile, []byte(key+"\n"), 0o600))
	require.NoError(t, os.WriteFile(caFile, ca.CertPEM(), 0o600))
	return srv, []string{"--control", "https://" + srv.Addr(), "--operator-key-file", keyFile, "--ca", caFile}
}

func TestPlansCommands(t *testing.T) {
	t.Parallel()
	srv, flags := opControl(t, "s1")
	run := func(stdin string, args ...string) (string, error) {
		out, _, err := runJobbie(t, stdin, append(args, flags...)...)
		return out, err
	}
	out, err := run("", "plans", "list")
	require.NoError(t, err)
	require.Contains(t, out, "NAME")
	require.Contains(t, out, "free")

	plan := `{"name":"pro","currency":"EUR","prices":{"executions":{"unit":1000,"price":5}},"limits":{"max_keys":5}}`
	out, err = run(plan, "plans", "put", "-")
	require.NoError(t, err)
	require.Contains(t, out, "plan pro version 1, in effect from")
	out, err = run(plan, "plans", "put", "-", "-o", "json")
	require.NoError(t, err, "an existing plan is replaced")
	var pv wire.PlanView
	require.NoError(t, json.Unmarshal([]byte(out), &pv))
	require.Equal(t, uint64(2), pv.Version)

	out, err = run("", "plans", "show", "pro")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &pv))
	require.Equal(t, int64(5), *pv.Limits.MaxKeys)

	_, err = run(`{"name":"bad","currency":"eur"}`, "plans", "put", "-")
	require.ErrorContains(t, err, "field currency")
	_, err = run("", "plans", "show", "nope")
	require.ErrorContains(t, err, "not_found")

	ct, err := srv.CreateTenant(context.Background(), "acme")
	require.NoError(t, err)
	out, err = run("", "tenants", "set-plan", ct.Tenant.ID, "pro")
	require.NoError(t, err)
	require.Contains(t, out, "on free until")
	require.Contains(t, out, "then pro")
	out, err = run("", "tenants", "set-plan", ct.Tenant.ID, "pro", "-o", "json")
	require.NoError(t, err)
	var tp wire.TenantPlan
	require.NoError(t, json.Unmarshal([]byte(out), &tp))
	require.Equal(t, "pro", tp.Next.Name)

	out, err = run("", "tenants", "create", "bravo", "--plan", "pro", "-o", "json")
	require.NoError(t, err)
	var created wire.CreatedTenant
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	require.Equal(t, "bravo", created.Tenant.Name)
	require.NotEmpty(t, created.OwnerKey)
	tp, err = srv.TenantPlan(context.Background(), created.Tenant.ID)
	require.NoError(t, err)
	require.Equal(t, "pro", tp.Plan.Name, "on its plan from its creation")
	_, err = run("", "tenants", "create", "charlie", "--plan", "nope")
	require.ErrorContains(t, err, "field plan")

	_, _, err = runJobbie(t, "", "plans", "list", "--control", "https://"+srv.Addr(), "--operator-key-file", filepath.Join(t.TempDir(), "none"))
	require.ErrorContains(t, err, "--operator-key-file")
}

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
)

// jobbie login checks a key and saves a context (0600, under
// $XDG_CONFIG_HOME), the gateway's commands then need no flags, their
// flags and variables still win, and jobbie context lists, switches and
// deletes contexts. Bad flags are refused before any request.
// Not parallel: it sets the environment the commands read.
func TestLoginAndContexts(t *testing.T) {
	d := startDevCLI(t)
	cfgDir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgDir)
	for _, v := range []string{"JOBBIE_URL", "JOBBIE_KEY", "JOBBIE_KEY_FILE", "JOBBIE_NAMESPACE", "JOBBIE_CONTEXT"} {
		t.Setenv(v, "")
	}
	cfgPath := filepath.Join(cfgDir, "jobbie", "config.yaml")
	run := func(args ...string) (string, error) {
		t.Helper()
		out, _, err := runJobbie(t, "", args...)
		return out, err
	}

	// Bad input: refused, nothing sent, nothing written.
	var hits atomic.Int32
	counter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(counter.Close)
	notPEM := filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--key-file", d.ownerFile}, "--url is required"},
		{[]string{"--url", "ftp://" + counter.Listener.Addr().String(), "--key-file", d.ownerFile}, "want http:// or https://"},
		{[]string{"--url", counter.URL}, "--key-file is required"},
		{[]string{"--url", counter.URL, "--key-file", d.ownerFile, "--key", "jk_x"}, "not both"},
		{[]string{"--url", counter.URL, "--key-file", filepath.Join(cfgDir, "missing.key")}, "--key-file: open"},
		{[]string{"--url", counter.URL, "--key-file", d.ownerFile, "--namespace", "Bad NS!"}, "--namespace"},
		{[]string{"--url", counter.URL, "--key-file", d.ownerFile, "--name", "two words"}, "--name: context name"},
		{[]string{"--url", counter.URL, "--key-file", d.ownerFile, "--ca-file", notPEM}, "holds no PEM certificate"},
	} {
		_, err := run(append([]string{"login"}, tc.args...)...)
		require.ErrorContains(t, err, tc.want, "%v", tc.args)
	}
	require.Zero(t, hits.Load(), "a bad flag sent a request")
	require.NoFileExists(t, cfgPath)

	// A key the gateway refuses is not saved.
	bogus := clitest.KeyFile(t, "jk_not_a_real_key")
	_, err := run("login", "--url", d.gateway, "--key-file", bogus)
	require.ErrorContains(t, err, "login to "+d.gateway)
	require.NoFileExists(t, cfgPath)

	out, err := run("login", "--url", d.gateway, "--key-file", d.ownerFile, "--namespace", "default", "--name", "dev")
	require.NoError(t, err)
	require.Contains(t, out, `context "dev" (namespace default) is current`)
	st, err := os.Stat(cfgPath)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	// No flags: the context's URL, key and namespace.
	out, err = run("enqueue", "ctx.q", `{"n":1}`)
	require.NoError(t, err)
	jobID := strings.Fields(out)[0]
	job, err := d.owner.GetJob(context.Background(), jobID)
	require.NoError(t, err)
	require.Equal(t, "ctx.q", job.Queue)

	// Flags and variables beat the context.
	_, err = run("queues", "--url", "http://"+counter.Listener.Addr().String()+"/nowhere", "-o", "json")
	require.Error(t, err)
	require.NotZero(t, hits.Load(), "--url did not win over the context")
	t.Setenv("JOBBIE_KEY_FILE", filepath.Join(cfgDir, "missing.key"))
	_, err = run("queues")
	require.ErrorContains(t, err, "$JOBBIE_KEY_FILE")
	t.Setenv("JOBBIE_KEY_FILE", "")

	// A second context, a billing key: a 403 on listing queues still
	// logs in (the key is good); it becomes current.
	billing := d.keyFile(t, "ctx-billing", "billing")
	_, err = run("login", "--url", d.gateway, "--key-file", billing, "--name", "prod")
	require.NoError(t, err)
	out, err = run("context", "list")
	require.NoError(t, err)
	rows := clitest.TableLines(out)
	require.Equal(t, []string{"CURRENT", "NAME", "URL", "NAMESPACE", "KEY", "CA", "FILE"}, rows[0])
	require.Equal(t, []string{"dev", d.gateway, "default", d.ownerFile, "-"}, rows[1], out)
	require.Equal(t, []string{"*", "prod", d.gateway, "-", billing, "-"}, rows[2], out)
	_, err = run("queues")
	require.ErrorContains(t, err, "403")

	// --context and $JOBBIE_CONTEXT pick another; an unknown one is refused.
	_, err = run("queues", "--context", "dev")
	require.NoError(t, err)
	t.Setenv("JOBBIE_CONTEXT", "dev")
	_, err = run("queues")
	require.NoError(t, err)
	t.Setenv("JOBBIE_CONTEXT", "nope")
	_, err = run("queues")
	require.ErrorContains(t, err, `$JOBBIE_CONTEXT: no context "nope"`)
	t.Setenv("JOBBIE_CONTEXT", "")

	out, err = run("context", "use", "dev")
	require.NoError(t, err)
	require.Equal(t, "context \"dev\" is current\n", out)
	var cur cli.Context
	out, err = run("context", "current", "-o", "json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &cur), out)
	require.Equal(t, cli.Context{Name: "dev", URL: d.gateway, KeyFile: d.ownerFile, Namespace: "default"}, cur)
	out, err = run("__complete", "context", "use", "")
	require.NoError(t, err)
	require.Contains(t, out, "dev\nprod\n", "the shells complete context names")
	_, err = run("context", "use", "nope")
	require.ErrorContains(t, err, `no context "nope"`)
	require.ErrorContains(t, err, "there are dev, prod")

	_, err = run("context", "delete", "dev")
	require.NoError(t, err)
	_, err = run("context", "current")
	require.ErrorContains(t, err, "no current context")
	out, err = run("context", "list", "-o", "json")
	require.NoError(t, err)
	var all []cli.Context
	require.NoError(t, json.Unmarshal([]byte(out), &all))
	require.Len(t, all, 1)
	require.Equal(t, "prod", all[0].Name)
}

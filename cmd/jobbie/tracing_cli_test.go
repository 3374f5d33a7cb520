package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
)

// `jobbie tracing` against jobbie dev: each change checked against what
// the API then holds, -o json and yaml are the API's answer, a bad URL is
// refused naming otlp_endpoint and changes nothing, --namespace keeps a
// change to its namespace, and a developer key reads and is refused a
// change.
func TestTracingCommandsAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t, "--push-allow-private") // the collectors' addresses are inside ones
	ctx := context.Background()
	const url = "https://127.0.0.1:4318/v1/traces"
	held := func(ns string) string {
		t.Helper()
		u, err := d.owner.WithNamespace(ns).GetTracing(ctx)
		require.NoError(t, err)
		return u
	}

	out := d.run(t, "tracing", "get")
	require.Equal(t, "none", clitest.Field(out, "OTLP ENDPOINT"), out)
	out = d.run(t, "tracing", "set", url)
	require.Equal(t, url, clitest.Field(out, "OTLP ENDPOINT"), out)
	require.Equal(t, url, held("default"))
	require.JSONEq(t, apiGet(t, d.gateway+"/api/v1/tracing", d.ownerFile), d.run(t, "tracing", "get", "-o", "json"),
		"-o json is the API's answer")
	var y map[string]string
	require.NoError(t, yaml.Unmarshal([]byte(d.run(t, "tracing", "get", "-o", "yaml")), &y))
	require.Equal(t, map[string]string{"otlp_endpoint": url}, y)

	// Another namespace: its own endpoint, the default's untouched.
	d.run(t, "namespaces", "create", "billing")
	out = d.run(t, "tracing", "set", "https://localhost:4319/v1/traces", "--namespace", "billing")
	require.Equal(t, "billing", clitest.Field(out, "NAMESPACE"), out)
	require.Equal(t, "https://localhost:4319/v1/traces", held("billing"))
	require.Equal(t, url, held("default"))

	// A bad URL: the API's 400 naming it, and nothing changed.
	_, err := d.as(t, d.ownerFile, "tracing", "set", "http://127.0.0.1:4318/v1/traces")
	e, ok := client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, 400, e.Status, "%v", err)
	require.Equal(t, "otlp_endpoint", e.Field, "%v", err)
	require.Equal(t, url, held("default"), "the refused URL changed nothing")
	_, err = d.as(t, d.ownerFile, "tracing", "set", " ")
	require.EqualError(t, err, "the URL is empty: give the collector's traces URL, or `jobbie tracing clear` to remove it")

	// A developer reads it and is refused a change.
	dev := d.keyFile(t, "builds", "developer")
	out, err = d.as(t, dev, "tracing", "get")
	require.NoError(t, err)
	require.Equal(t, url, clitest.Field(out, "OTLP ENDPOINT"), out)
	_, err = d.as(t, dev, "tracing", "clear")
	require.True(t, client.IsForbidden(err), "%v", err)
	require.Contains(t, err.Error(), "this needs a key with namespace.manage")
	require.Equal(t, url, held("default"))

	out = d.run(t, "tracing", "clear")
	require.Equal(t, "none", clitest.Field(out, "OTLP ENDPOINT"), out)
	require.Empty(t, held("default"))
	require.Equal(t, "https://localhost:4319/v1/traces", held("billing"))
}

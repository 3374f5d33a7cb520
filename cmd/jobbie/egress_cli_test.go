package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
	"github.com/jobbie/jobbie/wire"
)

// `jobbie namespaces egress` against jobbie dev: each change checked
// against what the API then holds, a bad entry refused with its field
// named and nothing changed, a developer key reads and is refused a
// change, and clear removes the list.
func TestNamespaceEgressCommandsAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t)
	ctx := context.Background()
	held := func() []string {
		t.Helper()
		allow, err := d.owner.GetNamespaceEgress(ctx, "default")
		require.NoError(t, err)
		return allow
	}

	out := d.run(t, "namespaces", "egress", "get", "default")
	require.Equal(t, "default", clitest.Field(out, "NAMESPACE"), out)
	require.Equal(t, "none: any public host", clitest.Field(out, "EGRESS ALLOW"), out)

	want := []string{"hooks.example.com", "*.example.net"}
	out = d.run(t, "namespaces", "egress", "set", "default", "--allow", "hooks.example.com", "--allow", "*.example.net")
	require.Equal(t, "hooks.example.com, *.example.net", clitest.Field(out, "EGRESS ALLOW"), out)
	require.Equal(t, want, held())
	require.Equal(t, "hooks.example.com, *.example.net", clitest.Field(d.run(t, "namespaces", "egress", "get", "default"), "EGRESS ALLOW"))
	require.JSONEq(t, apiGet(t, d.gateway+"/api/v1/namespaces/default/egress", d.ownerFile),
		d.run(t, "namespaces", "egress", "get", "default", "-o", "json"), "-o json is the API's answer")
	var got wire.NamespaceEgress
	out = d.run(t, "namespaces", "egress", "set", "default", "--allow", "hooks.example.com", "-o", "json")
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Equal(t, []string{"hooks.example.com"}, got.EgressAllow)
	want = []string{"hooks.example.com"}

	// A bad entry: the API's 400 naming it, and nothing changed.
	_, err := d.as(t, d.ownerFile, "namespaces", "egress", "set", "default", "--allow", "ok.example.com", "--allow", "no such host")
	e, ok := client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, 400, e.Status, "%v", err)
	require.Equal(t, "egress_allow[1]", e.Field, "%v", err)
	require.Equal(t, want, held(), "the refused list changed nothing")
	// Refused before anything is sent.
	_, err = d.as(t, d.ownerFile, "namespaces", "egress", "set", "default")
	require.EqualError(t, err, "nothing to set: give --allow once per host, or `jobbie namespaces egress clear` to remove the list")
	_, err = d.as(t, d.ownerFile, "namespaces", "egress", "get", "Bad_Name")
	require.Error(t, err)
	_, err = d.as(t, d.ownerFile, "namespaces", "egress", "get", "nope")
	require.True(t, client.IsNotFound(err), "%v", err)

	// A developer reads the list and is refused a change.
	dev := d.keyFile(t, "builds", "developer")
	out, err = d.as(t, dev, "namespaces", "egress", "get", "default")
	require.NoError(t, err)
	require.Equal(t, "hooks.example.com", clitest.Field(out, "EGRESS ALLOW"), out)
	out, err = d.as(t, dev, "namespaces", "egress", "clear", "default")
	require.True(t, client.IsForbidden(err), "%v", err)
	require.Regexp(t, `^egress allow-list of namespace default: 403 forbidden: .+ \(this needs a key with namespace\.manage: owner or admin\)$`,
		err.Error())
	require.Empty(t, out)
	require.Equal(t, want, held())

	out = d.run(t, "namespaces", "egress", "clear", "default")
	require.Equal(t, "none: any public host", clitest.Field(out, "EGRESS ALLOW"), out)
	require.Equal(t, []string{}, held())
}

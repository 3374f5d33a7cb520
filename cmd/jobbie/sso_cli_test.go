package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
)

const ssoCLISecret = "cli-secret-that-must-never-show"

// The SDK's GetSSO, PutSSO and DeleteSSO against jobbie dev: the
// configuration as kept, its secret never answered, a bad field refused
// naming it with nothing changed, an admin refused, and gone once
// deleted.
func TestSSOSDKAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t)
	ctx := context.Background()
	_, err := d.owner.GetSSO(ctx)
	require.True(t, client.IsNotFound(err), "none yet: %v", err)

	req := client.SSORequest{IssuerURL: "https://login.example.com", ClientID: "jobbie-console", ClientSecret: ssoCLISecret,
		AllowedDomains: []string{"example.com"}, GroupRoles: []client.SSOGroupRole{{Group: "platform", Role: "admin"}}, DefaultRole: "viewer"}
	put, err := d.owner.PutSSO(ctx, req)
	require.NoError(t, err)
	require.True(t, put.ClientSecretSet)
	require.Equal(t, "groups", put.GroupsClaim, "the default")
	require.Equal(t, "/console/api/sso/callback", put.RedirectPath)
	got, err := d.owner.GetSSO(ctx)
	require.NoError(t, err)
	require.Equal(t, put, got)
	require.NotContains(t, apiGet(t, d.gateway+"/api/v1/sso", d.ownerFile), ssoCLISecret)

	bad := req
	bad.GroupRoles = []client.SSOGroupRole{{Group: "platform", Role: "admin"}, {Group: "x", Role: "no-such-role"}}
	_, err = d.owner.PutSSO(ctx, bad)
	e, ok := client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, 400, e.Status)
	require.Equal(t, "group_roles[1].role", e.Field)
	got, err = d.owner.GetSSO(ctx)
	require.NoError(t, err)
	require.Equal(t, put, got, "the refused configuration changed nothing")

	admin := client.New(d.gateway, readKey(t, d.keyFile(t, "ops", "admin")))
	t.Cleanup(admin.CloseIdleConnections)
	_, err = admin.GetSSO(ctx)
	require.True(t, client.IsForbidden(err), "the owner's alone: %v", err)

	require.NoError(t, d.owner.DeleteSSO(ctx))
	_, err = d.owner.GetSSO(ctx)
	require.True(t, client.IsNotFound(err), "%v", err)
	require.True(t, client.IsNotFound(d.owner.DeleteSSO(ctx)), "nothing left to delete")
}

// `jobbie sso` against jobbie dev: set reads the secret from a file or
// stdin and replaces the whole configuration, keeping the secret when
// none is given; get prints it (-o json is the API's answer) and never
// the secret; a bad --group-role is refused before any request, a bad
// field is the API's 400 naming it; delete removes it.
func TestSSOCommandsAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t)
	ctx := context.Background()
	secretFile := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secretFile, []byte(ssoCLISecret+"\n"), 0o600))

	_, err := d.as(t, d.ownerFile, "sso", "set", "--issuer-url", "https://login.example.com", "--client-id", "c1", "--allowed-domain", "example.com", "--default-role", "viewer")
	e, ok := client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "client_secret", e.Field, "required the first time: %v", err)

	out := d.run(t, "sso", "set", "--issuer-url", "https://login.example.com", "--client-id", "c1", "--client-secret-file", secretFile,
		"--allowed-domain", "example.com", "--allowed-group", "staff", "--group-role", "platform=admin", "--group-role", "support=viewer",
		"--default-role", "viewer")
	require.Equal(t, "true", clitest.Field(out, "CLIENT SECRET SET"), out)
	require.Equal(t, "platform=admin, support=viewer", clitest.Field(out, "GROUP ROLES"), out)
	require.NotContains(t, out, ssoCLISecret)
	held, err := d.owner.GetSSO(ctx)
	require.NoError(t, err)
	require.Equal(t, []client.SSOGroupRole{{Group: "platform", Role: "admin"}, {Group: "support", Role: "viewer"}}, held.GroupRoles)
	require.Equal(t, []string{"staff"}, held.AllowedGroups)

	out = d.run(t, "sso", "get")
	require.Equal(t, "https://login.example.com", clitest.Field(out, "ISSUER URL"), out)
	require.Equal(t, "c1", clitest.Field(out, "CLIENT ID"), out)
	js := d.run(t, "sso", "get", "-o", "json")
	require.JSONEq(t, apiGet(t, d.gateway+"/api/v1/sso", d.ownerFile), js, "-o json is the API's answer")
	require.NotContains(t, js, ssoCLISecret)

	// The whole configuration is replaced; no secret given keeps it. Then a
	// new one from stdin.
	out = d.run(t, "sso", "set", "--issuer-url", "https://idp.example.org", "--client-id", "c2", "--allowed-group", "staff",
		"--group-role", "staff=developer")
	require.Equal(t, "true", clitest.Field(out, "CLIENT SECRET SET"), out)
	require.Equal(t, "none", clitest.Field(out, "ALLOWED DOMAINS"), out)
	require.Equal(t, "staff=developer", clitest.Field(out, "GROUP ROLES"), out)
	require.Equal(t, "none (refused)", clitest.Field(out, "DEFAULT ROLE"), out)
	stdout, _, err := runJobbie(t, "  from-stdin-secret \n", "sso", "set", "--issuer-url", "https://idp.example.org", "--client-id", "c2",
		"--allowed-group", "staff", "--default-role", "viewer", "--client-secret-file", "-", "--url", d.gateway, "--key-file", d.ownerFile)
	require.NoError(t, err)
	require.Equal(t, "viewer", clitest.Field(stdout, "DEFAULT ROLE"), stdout)

	before, err := d.owner.GetSSO(ctx)
	require.NoError(t, err)
	_, err = d.as(t, d.ownerFile, "sso", "set", "--issuer-url", "https://idp.example.org", "--client-id", "c2", "--group-role", "platform")
	require.EqualError(t, err, `--group-role "platform": want GROUP=ROLE`)
	_, err = d.as(t, d.ownerFile, "sso", "set", "--issuer-url", "http://idp.example.org", "--client-id", "c2", "--allowed-group", "staff", "--default-role", "viewer")
	e, ok = client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "issuer_url", e.Field, "%v", err)
	_, err = d.as(t, d.ownerFile, "sso", "set", "--client-secret-file", filepath.Join(t.TempDir(), "missing"), "--issuer-url", "https://x.example")
	require.ErrorContains(t, err, "--client-secret-file")
	after, err := d.owner.GetSSO(ctx)
	require.NoError(t, err)
	require.Equal(t, before, after, "the refused changes changed nothing")

	out = d.run(t, "sso", "delete")
	require.Contains(t, out, "deleted")
	_, err = d.as(t, d.ownerFile, "sso", "get")
	require.True(t, client.IsNotFound(err), "%v", err)
}

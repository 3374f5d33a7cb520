package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
)

// `jobbie encryption` against jobbie dev: each change checked against
// what the API then holds; the tenant key from a file and from stdin,
// never printed; -o json and yaml are the API's answer; a malformed key
// is the API's 400 naming tenant_key with nothing changed; revoke wants
// --confirm; --namespace keeps a change to its namespace; an admin key
// reads and is refused a change (encryption.manage is the owner's).
func TestEncryptionCommandsAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t)
	ctx := context.Background()
	held := func(ns string) *client.Encryption {
		t.Helper()
		e, err := d.owner.WithNamespace(ns).GetEncryption(ctx)
		require.NoError(t, err)
		return e
	}
	keyFile := func(key string) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), "tenant.key")
		require.NoError(t, os.WriteFile(p, []byte(key+"\n"), 0o600))
		return p
	}

	out := d.run(t, "encryption", "get")
	require.Equal(t, "false", clitest.Field(out, "ENABLED"), out)
	require.Equal(t, "none", clitest.Field(out, "KEY SOURCE"), out)
	out = d.run(t, "encryption", "enable", "--search-decrypt")
	require.Equal(t, "true", clitest.Field(out, "ENABLED"), out)
	require.Equal(t, "true", clitest.Field(out, "SEARCH DECRYPT"), out)
	require.Equal(t, "operator", clitest.Field(out, "KEY SOURCE"), out)
	require.Equal(t, "none", clitest.Field(out, "TENANT KEY ID"), out)
	require.Equal(t, "1", clitest.Field(out, "GENERATION"), out)

	// The tenant key from a file: its id shown, the key nowhere.
	k1 := newTenantKey(t)
	id1, err := client.TenantKeyID(k1)
	require.NoError(t, err)
	out = d.run(t, "encryption", "enable", "--tenant-key-file", keyFile(k1), "--search-decrypt=false")
	require.Equal(t, id1, clitest.Field(out, "TENANT KEY ID"), out)
	require.Equal(t, "tenant", clitest.Field(out, "KEY SOURCE"), out)
	require.Equal(t, "false", clitest.Field(out, "SEARCH DECRYPT"), out)
	requireNoKey(t, out, k1)
	require.Equal(t, id1, *held("default").TenantKeyID)
	js := d.run(t, "encryption", "get", "-o", "json")
	require.JSONEq(t, apiGet(t, d.gateway+"/api/v1/encryption", d.ownerFile), js, "-o json is the API's answer")
	var y map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(d.run(t, "encryption", "get", "-o", "yaml")), &y))
	require.Equal(t, id1, y["tenant_key_id"])
	require.Equal(t, "tenant", y["key_source"])

	// A job sealed under it, read back through the rotation below.
	job, err := d.owner.Enqueue(ctx, client.EnqueueRequest{Queue: "charges", Payload: map[string]string{"card": "4111"}})
	require.NoError(t, err)

	// Rotate from stdin.
	k2 := newTenantKey(t)
	id2, err := client.TenantKeyID(k2)
	require.NoError(t, err)
	out, _, err = runJobbie(t, k2+"\n", "encryption", "rotate", "--tenant-key-file", "-", "--url", d.gateway, "--key-file", d.ownerFile)
	require.NoError(t, err)
	require.Equal(t, id2, clitest.Field(out, "TENANT KEY ID"), out)
	requireNoKey(t, out, k2)
	require.Equal(t, id2, *held("default").TenantKeyID)
	detail, err := d.owner.GetJob(ctx, job.JobID)
	require.NoError(t, err)
	require.JSONEq(t, `{"card":"4111"}`, string(detail.Payload))

	// Refusals: the API's 400 naming tenant_key, and nothing changed; no
	// key given; no --confirm.
	before := held("default")
	_, err = d.as(t, d.ownerFile, "encryption", "rotate", "--tenant-key-file", keyFile("not-a-key"))
	e, ok := client.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, 400, e.Status, "%v", err)
	require.Equal(t, "tenant_key", e.Field, "%v", err)
	_, err = d.as(t, d.ownerFile, "encryption", "rotate")
	require.EqualError(t, err, "no key: give --tenant-key-file with a file holding it, or - to read it from stdin")
	_, _, err = runJobbie(t, " \n", "encryption", "rotate", "--tenant-key-file", "-", "--url", d.gateway, "--key-file", d.ownerFile)
	require.EqualError(t, err, "--tenant-key-file -: stdin is empty")
	_, err = d.as(t, d.ownerFile, "encryption", "rotate", "--tenant-key-file", filepath.Join(t.TempDir(), "none"))
	require.ErrorContains(t, err, "--tenant-key-file: ")
	_, err = d.as(t, d.ownerFile, "encryption", "revoke")
	require.EqualError(t, err, "revoking makes everything sealed under the tenant key unreadable, for good: add --confirm")
	require.Equal(t, before, held("default"), "the refusals changed nothing")

	// An admin reads and is refused a change: encryption.manage is the
	// owner's alone.
	admin := d.keyFile(t, "ops", "admin")
	out, err = d.as(t, admin, "encryption", "get")
	require.NoError(t, err)
	require.Equal(t, id2, clitest.Field(out, "TENANT KEY ID"), out)
	_, err = d.as(t, admin, "encryption", "revoke", "--confirm")
	require.True(t, client.IsForbidden(err), "%v", err)
	require.Contains(t, err.Error(), "encryption.manage")
	require.Equal(t, before, held("default"))

	// Another namespace: its own settings, the default's untouched.
	d.run(t, "namespaces", "create", "billing")
	out = d.run(t, "encryption", "enable", "--namespace", "billing")
	require.Equal(t, "billing", clitest.Field(out, "NAMESPACE"), out)
	require.Equal(t, "operator", held("billing").KeySource)
	require.Equal(t, id2, *held("default").TenantKeyID)

	// Revoke: the job is unreadable, and the table says which key went.
	out = d.run(t, "encryption", "revoke", "--confirm")
	require.Equal(t, "revoked", clitest.Field(out, "KEY SOURCE"), out)
	require.True(t, strings.HasPrefix(clitest.Field(out, "REVOKED KEYS"), id2+" (generation 1, "), out)
	_, err = d.owner.GetJob(ctx, job.JobID)
	require.True(t, client.IsEncryptionKeyRevoked(err), "%v", err)
	require.Equal(t, "operator", held("billing").KeySource, "another namespace is untouched")

	out = d.run(t, "encryption", "disable")
	require.Equal(t, "false", clitest.Field(out, "ENABLED"), out)
	require.False(t, held("default").Enabled)
}

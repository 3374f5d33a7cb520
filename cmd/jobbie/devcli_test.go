package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
)

// devCLI is jobbie dev with its owner key, for the tests that run
// commands against it and check what the API then holds through owner.
type devCLI struct {
	*devServer
	ownerFile string
	owner     *client.Client
}

// startDevCLI runs jobbie dev with the flags extra until the test ends.
func startDevCLI(t *testing.T, extra ...string) *devCLI {
	t.Helper()
	d := &devCLI{devServer: startDevIn(t, t.TempDir(), extra...)}
	d.ownerFile = filepath.Join(d.dir, "owner.key")
	d.owner = client.New(d.gateway, readKey(t, d.ownerFile))
	t.Cleanup(d.owner.CloseIdleConnections)
	return d
}

// as runs the command line args against dev's gateway with the key in
// keyFile, and returns what it printed and its error.
func (d *devCLI) as(t *testing.T, keyFile string, args ...string) (string, error) {
	t.Helper()
	out, _, err := runJobbie(t, "", append(args, "--url", d.gateway, "--key-file", keyFile)...)
	return out, err
}

// run runs args with the owner key; they must succeed.
func (d *devCLI) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := d.as(t, d.ownerFile, args...)
	require.NoError(t, err, "%v", args)
	return out
}

// keyFile creates a key of role for every namespace with `jobbie keys
// create` and returns the file that holds its secret.
func (d *devCLI) keyFile(t *testing.T, name, role string) string {
	t.Helper()
	out := d.run(t, "keys", "create", "--name", name, "--role", role, "--namespaces", "*")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return clitest.KeyFile(t, lines[len(lines)-1])
}

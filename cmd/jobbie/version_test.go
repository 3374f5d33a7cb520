package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// `jobbie version` and `jobbie --version` print one line: "dev" from a
// plain build, and what the Makefile's -ldflags stamp when it stamps.
func TestVersion(t *testing.T) {
	out, _, err := runJobbie(t, "", "version")
	require.NoError(t, err)
	require.Regexp(t, `^jobbie dev \(commit \S+, built \S+, go\S+ \w+/\w+\)\n$`, out)
	flag, _, err := runJobbie(t, "", "--version")
	require.NoError(t, err)
	require.Equal(t, out, flag)

	_, _, err = runJobbie(t, "", "version", "extra")
	require.ErrorContains(t, err, `unknown command "extra"`)

	old := [3]string{version, commit, date}
	t.Cleanup(func() { version, commit, date = old[0], old[1], old[2] })
	version, commit, date = "v1.4.0", "0123456789abcdef0123", "2026-11-29T02:00:00Z"
	out, _, err = runJobbie(t, "", "version")
	require.NoError(t, err)
	require.Regexp(t, `^jobbie v1\.4\.0 \(commit 0123456789ab, built 2026-11-29T02:00:00Z, go`, out)
	flag, _, err = runJobbie(t, "", "--version")
	require.NoError(t, err)
	require.Equal(t, out, flag)
}

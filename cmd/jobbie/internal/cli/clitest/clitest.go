// Package clitest runs jobbie's commands in process for tests, the way
// main does, and reads the tables they print.
package clitest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// Run executes the command line args on root (a tree built for this run:
// cobra keeps flag values between runs) with stdin, and returns stdout,
// stderr and the error main would print.
func Run(t testing.TB, root *cobra.Command, stdin string, args ...string) (string, string, error) {
	t.Helper()
	root.SilenceUsage, root.SilenceErrors = true, true
	var stdout, stderr bytes.Buffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	err := root.Execute()
	return stdout.String(), stderr.String(), err
}

// Field is the value of a name-value table's row name ("" when absent).
func Field(out, name string) string {
	for line := range strings.SplitSeq(out, "\n") {
		if rest, ok := strings.CutPrefix(line, name+"  "); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// TableLines are out's lines of two fields or more, split into fields.
func TableLines(out string) [][]string {
	var lines [][]string
	for line := range strings.SplitSeq(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			lines = append(lines, f)
		}
	}
	return lines
}

// TableRows indexes a table's lines by their first two fields.
func TableRows(out string) map[string][]string {
	rows := map[string][]string{}
	for _, f := range TableLines(out) {
		rows[f[0]+" "+f[1]] = f
	}
	return rows
}

// KeyFile writes key into a file of the test's and returns its path.
func KeyFile(t testing.TB, key string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key")
	require.NoError(t, os.WriteFile(path, []byte(key+"\n"), 0o600))
	return path
}

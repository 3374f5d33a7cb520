package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
	"github.com/jobbie/jobbie/internal/leakcheck"
)

// TestMain points the config file at a directory with none, so a
// developer's own contexts never reach the tests; a test of contexts sets
// its own. With execEnv set, the test binary is jobbie itself, for the
// tests that run a command as a process (subproc_handlers_test.go).
func TestMain(m *testing.M) {
	if os.Getenv(execEnv) == "1" {
		if err := newRoot().Execute(); err != nil {
			fmt.Fprintln(os.Stderr, "jobbie:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("jobbie-test-noconfig-%d", os.Getpid()))
	os.Setenv("XDG_CONFIG_HOME", dir)
	// The go commands the tests run write their telemetry there.
	leakcheck.VerifyTestMain(m, goleak.Cleanup(func(code int) { _ = os.RemoveAll(dir); os.Exit(code) }))
}

// runJobbie runs the command line args in process, the way main does,
// and returns stdout, stderr and the error main would print.
func runJobbie(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	return clitest.Run(t, newRoot(), stdin, args...)
}

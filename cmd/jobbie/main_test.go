package main

import (
	"testing"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
	"github.com/jobbie/jobbie/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// runJobbie runs the command line args in process, the way main does,
// and returns stdout, stderr and the error main would print.
func runJobbie(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	return clitest.Run(t, newRoot(), stdin, args...)
}

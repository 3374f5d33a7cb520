package roles

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
	"github.com/jobbie/jobbie/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// runJobbie runs the command line args on the processes' commands in
// process, and returns stdout, stderr and the error main would print.
func runJobbie(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	root := &cobra.Command{Use: "jobbie"}
	root.AddCommand(Commands()...)
	return clitest.Run(t, root, stdin, args...)
}

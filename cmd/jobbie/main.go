// Command jobbie runs Jobbie's server roles and is its command-line client.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/roles"
)

// defaultGCPercent trades memory for CPU: the servers' live heap is small
// next to Pebble's cache, and collecting half as often took a tenth of the
// CPU off the lifecycle benchmark. GOGC, when set, wins.
const defaultGCPercent = 200

func main() {
	roles.WithHugePages()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	if err := newRoot().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "jobbie:", err)
		os.Exit(1)
	}
}

// newRoot is the command tree: the processes' commands (package roles),
// and the commands that call Jobbie's APIs (package cli), the operator's
// live moves among them standing under `jobbie control`.
func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "jobbie",
		Short:         "Jobbie: a hosted, multi-tenant job queue",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       currentBuild().Version,
	}
	// --version prints the same line as `jobbie version`.
	root.SetVersionTemplate(currentBuild().String() + "\n")
	root.AddCommand(versionCmd())
	cli.InstallYAML(root)
	root.AddCommand(roles.Commands(cli.ControlCommands()...)...)
	root.AddCommand(cli.Commands()...)
	return root
}

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

// The help groups of the top-level commands.
const (
	groupServer = "server"
	groupClient = "client"
	groupOther  = "other"
)

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
	cli.InstallYAML(root)
	// --help shows the server roles apart from the commands that call an
	// API (bench among them: it is a client of the gateway).
	root.AddGroup(&cobra.Group{ID: groupServer, Title: "Server roles (run Jobbie's processes):"},
		&cobra.Group{ID: groupClient, Title: "Client commands (call a gateway or the control plane):"},
		&cobra.Group{ID: groupOther, Title: "Other commands:"})
	for _, c := range roles.Commands(cli.ControlCommands()...) {
		c.GroupID = groupServer
		if c.Name() == "bench" {
			c.GroupID = groupClient
		}
		root.AddCommand(c)
	}
	for _, c := range cli.Commands() {
		c.GroupID = groupClient
		root.AddCommand(c)
	}
	version := versionCmd()
	version.GroupID = groupOther
	root.AddCommand(version)
	root.SetHelpCommandGroupID(groupOther)
	root.SetCompletionCommandGroupID(groupOther)
	return root
}

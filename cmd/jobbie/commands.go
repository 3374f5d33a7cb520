package main

import (
	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli"
)

// addCommands registers the commands beyond dev.
func addCommands(root *cobra.Command) {
	root.AddCommand(benchCmd(), controlCmd(), gatewayCmd(), shardCmd(), certsCmd())
	root.AddCommand(cli.Commands()...)
}

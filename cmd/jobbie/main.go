// Command jobbie runs Jobbie's server roles and is its command-line client.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "jobbie",
		Short:         "Jobbie: a hosted, multi-tenant job queue",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(devCmd())
	addCommands(root)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "jobbie:", err)
		os.Exit(1)
	}
}

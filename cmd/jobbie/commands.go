package main

import "github.com/spf13/cobra"

// addCommands registers the commands beyond dev.
func addCommands(root *cobra.Command) {
	root.AddCommand(benchCmd(), searchCmd(), bulkCmd())
	root.AddCommand(controlCmd())
	root.AddCommand(gatewayCmd())
	root.AddCommand(shardCmd())
	root.AddCommand(certsCmd())
	root.AddCommand(plansCmd(), tenantsCmd())
	root.AddCommand(backupsCmd())
	root.AddCommand(usageCmd(), planCmd(), invoicesCmd())
	root.AddCommand(append(append(jobCmds(), queueCmds()...), workersCmd(), schedulesCmd(), keysCmd(), namespacesCmd(), shardsCmd(), statusCmd())...)
}

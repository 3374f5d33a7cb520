package cli

import "github.com/spf13/cobra"

// Commands are the top-level commands that call Jobbie's APIs: the
// tenant's, through a gateway with an API key, and the operator's on the
// control plane.
func Commands() []*cobra.Command {
	cmds := []*cobra.Command{searchCmd(), bulkCmd(), backupsCmd(), usageCmd(), aiCmd(), heldCmd(), planCmd(), invoicesCmd(),
		workersCmd(), schedulesCmd(), keysCmd(), namespacesCmd(), shardsCmd(), statusCmd(),
		plansCmd(), tenantsCmd(), workerCmd(), signingKeysCmd(), webhooksCmd(), alertsCmd(), auditCmd(), outboxCmd(), tracingCmd(), encryptionCmd(), ssoCmd(), loginCmd(), contextCmd(), eventsCmd(), rolesCmd(), clusterCmd(), topCmd()}
	cmds = append(cmds, jobCmds()...)
	cmds = append(cmds, queueCmds()...)
	for _, c := range cmds {
		if watchable[c.Name()] {
			withWatch(c)
		}
		if c.Name() == "webhooks" {
			for _, sub := range c.Commands() {
				if sub.Name() == "list" {
					withWatch(sub)
				}
			}
		}
	}
	return cmds
}

// watchable are the list commands that take --watch (watch.go).
var watchable = map[string]bool{"queues": true, "schedules": true, "workers": true, "keys": true,
	"namespaces": true, "shards": true, "webhooks": true, "dead": true, "roles": true, "alerts": true}

// ControlCommands are the operator's commands that stand under `jobbie
// control`, beside the control role's own: the live namespace moves.
func ControlCommands() []*cobra.Command {
	return []*cobra.Command{controlMoveCmd(), controlMovesCmd()}
}

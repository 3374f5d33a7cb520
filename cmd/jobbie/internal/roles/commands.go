package roles

import "github.com/spf13/cobra"

// Commands are the commands that run Jobbie's processes (dev, control,
// gateway, shard), issue their certificates (certs) and measure them
// (bench). controlMore are commands to stand under `jobbie control`
// beside its member commands.
func Commands(controlMore ...*cobra.Command) []*cobra.Command {
	return []*cobra.Command{devCmd(), controlCmd(controlMore...), gatewayCmd(), shardCmd(), certsCmd(), benchCmd()}
}

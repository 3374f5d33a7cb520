package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// workersCmd is `jobbie workers`: the workers the namespace's shard has
// seen fetch or heartbeat.
func workersCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workers",
		Short: "List the namespace's workers: their queues, active jobs and when last seen",
		Long: `workers lists the workers the namespace's shard has seen fetch or heartbeat,
by id. A worker unseen for two minutes is gone.`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runAPI(cmd, api, "workers", tenancy.ActQueueRead,
			func(ctx context.Context, c *client.Client) ([]client.WorkerInfo, error) {
				ws, err := c.ListWorkers(ctx)
				if ws == nil {
					ws = []client.WorkerInfo{}
				}
				return ws, err
			},
			printWorkers)
	}
	return cmd
}

func printWorkers(w io.Writer, ws []client.WorkerInfo) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tHOSTNAME\tSTATUS\tACTIVE JOBS\tLAST SEEN\tQUEUES")
	for _, wk := range ws {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", wk.ID, orDash(wk.Hostname), wk.Status, wk.ActiveJobs,
			stamp(&wk.LastSeen), orDash(oneLine(strings.Join(wk.Queues, ","), 80)))
	}
	return tw.Flush()
}

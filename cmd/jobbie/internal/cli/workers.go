package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
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
	cmd.AddCommand(workerDrainCmd())
	return cmd
}

// workerDrainCmd is `jobbie workers drain <id>`.
func workerDrainCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "drain <worker-id>",
		Short: "Ask a worker to stop taking jobs: it finishes what it holds and stops",
		Long: `drain asks a worker to stop taking jobs (for a deploy or a scale-down): its
fetches get no job from then on, and the SDKs' workers finish the jobs they
hold and return. The drain lasts while the namespace's shard leader does.`,
		Example: `  jobbie workers drain worker-7f3a`,
		Args:    exactArgs(1),
	}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		id := args[0]
		if id == "" || len(id) > wire.MaxWorkerID {
			return fmt.Errorf("worker id: 1 to %d bytes", wire.MaxWorkerID)
		}
		return runAPI(cmd, api, "workers drain "+id, tenancy.ActQueueManage,
			func(ctx context.Context, c *client.Client) (*client.WorkerDrain, error) {
				return c.DrainWorker(ctx, id)
			},
			func(w io.Writer, d *client.WorkerDrain) error {
				_, err := fmt.Fprintf(w, "worker %s draining: it takes no more jobs\n", d.WorkerID)
				return err
			})
	}
	return cmd
}

func printWorkers(w io.Writer, ws []client.WorkerInfo) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tHOSTNAME\tSTATUS\tACTIVE JOBS\tLAST SEEN\tQUEUES")
	for _, wk := range ws {
		status := wk.Status
		if wk.Draining {
			status += " (draining)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", wk.ID, orDash(wk.Hostname), status, wk.ActiveJobs,
			stamp(&wk.LastSeen), orDash(oneLine(strings.Join(wk.Queues, ","), 80)))
	}
	return tw.Flush()
}

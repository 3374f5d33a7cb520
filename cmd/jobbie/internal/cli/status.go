package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Status is `jobbie status -o json`: the namespace's queues summed, its
// workers and its shard cluster's health.
type Status struct {
	Namespace   string               `json:"namespace,omitempty"` // "" for the key's default
	Queues      int                  `json:"queues"`
	Paused      int                  `json:"paused"`
	Counts      client.QueueCounts   `json:"counts"`
	Throughput  float64              `json:"throughput"` // completed per minute, last 5 minutes
	Workers     int                  `json:"workers"`    // active ones
	WorkersGone int                  `json:"workers_gone"`
	Cluster     client.ClusterHealth `json:"cluster"`
}

func statusCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the namespace's queue totals, workers and its shard cluster's health",
		Long: `status sums the namespace's queues (jobs per state, completions per minute),
counts its workers and shows the health of the shard cluster that holds
it: each node's role and whether it is reachable. It exits with status 1
when the cluster is unhealthy (no leader, or no quorum reachable), after
printing it.`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		var st *Status
		err := runAPI(cmd, api, "status", tenancy.ActQueueRead,
			func(ctx context.Context, c *client.Client) (*Status, error) {
				var err error
				st, err = readStatus(ctx, c)
				if st != nil {
					st.Namespace = api.Namespace()
				}
				return st, err
			},
			printStatus)
		if err == nil && !st.Cluster.Healthy {
			return fmt.Errorf("shard %s is unhealthy", orDash(st.Cluster.ShardID))
		}
		return err
	}
	return cmd
}

func readStatus(ctx context.Context, c *client.Client) (*Status, error) {
	qs, err := c.ListQueues(ctx)
	if err != nil {
		return nil, err
	}
	ws, err := c.ListWorkers(ctx)
	if err != nil {
		return nil, err
	}
	h, err := c.ClusterHealth(ctx)
	if err != nil {
		return nil, err
	}
	st := &Status{Queues: len(qs), Cluster: *h}
	if st.Cluster.Nodes == nil {
		st.Cluster.Nodes = []client.ClusterNode{}
	}
	for _, q := range qs {
		if q.Paused {
			st.Paused++
		}
		n := &st.Counts
		n.Pending += q.Counts.Pending
		n.Scheduled += q.Counts.Scheduled
		n.Active += q.Counts.Active
		n.Retrying += q.Counts.Retrying
		n.Completed += q.Counts.Completed
		n.Dead += q.Counts.Dead
		n.Cancelled += q.Counts.Cancelled
		n.Held += q.Counts.Held
		st.Throughput += q.Throughput
	}
	for _, w := range ws {
		if w.Status == wire.WorkerGone {
			st.WorkersGone++
		} else {
			st.Workers++
		}
	}
	return st, nil
}

func printStatus(w io.Writer, st *Status) error {
	tw := newTable(w)
	ns := st.Namespace
	if ns == "" {
		ns = "(the key's default)"
	}
	fmt.Fprintf(tw, "NAMESPACE\t%s\n", ns)
	queues := plural(st.Queues, "queue")
	if st.Paused > 0 {
		queues += fmt.Sprintf(" (%d paused)", st.Paused)
	}
	fmt.Fprintf(tw, "QUEUES\t%s\n", queues)
	c := st.Counts
	fmt.Fprintf(tw, "JOBS\tpending %d, scheduled %d, active %d, retrying %d, held %d, completed %d, dead %d, cancelled %d\n",
		c.Pending, c.Scheduled, c.Active, c.Retrying, c.Held, c.Completed, c.Dead, c.Cancelled)
	fmt.Fprintf(tw, "THROUGHPUT\t%s completed per minute (last 5 minutes)\n", strconv.FormatFloat(st.Throughput, 'f', -1, 64))
	workers := fmt.Sprintf("%d active", st.Workers)
	if st.WorkersGone > 0 {
		workers += fmt.Sprintf(", %d gone", st.WorkersGone)
	}
	fmt.Fprintf(tw, "WORKERS\t%s\n", workers)
	h := st.Cluster
	health := "healthy"
	if !h.Healthy {
		health = "UNHEALTHY"
	}
	leader := h.LeaderID
	if leader == "" {
		leader = "none known"
	}
	fmt.Fprintf(tw, "SHARD\t%s: %s, leader %s\n", orDash(h.ShardID), health, leader)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "NODE\tROLE\tSTATUS")
	for _, n := range h.Nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", n.ID, n.Role, n.Status)
	}
	return tw.Flush()
}

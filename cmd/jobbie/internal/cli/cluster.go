package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// clusterCmd is `jobbie cluster status`: the namespace's shard cluster
// as GET /api/v1/cluster shows it: its leader and members, each node's
// role, whether it is reachable, and how far it replicated.
func clusterCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "The namespace's shard cluster: jobbie cluster status",
		Args:  cobra.NoArgs,
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the namespace's shard cluster: its leader and members, each one's role, reachability and replication lag",
		Long: `status shows the shard cluster that holds the namespace, as the node
answering sees it: the shard's id, its leader, and each member's role
(leader, follower, nonvoter), status (healthy, unreachable), the last log
entry it applied (APPLIED), how many entries it applied behind the
leader's commit index (LAG), and how long ago it and the leader last
heard from each other (CONTACT). A member that does not answer shows the
last index it reported, so its lag grows while it is away; "-" is a
figure not known. It exits with status 1 when the cluster is unhealthy
(no leader, or no quorum reachable), after printing it.`,
		Args: cobra.NoArgs,
	}
	api := addConn(status, gatewayAPI)
	var unhealthy bool
	status.RunE = func(cmd *cobra.Command, _ []string) error {
		err := runAPI(cmd, api, "cluster", tenancy.ActQueueRead,
			func(ctx context.Context, c *client.Client) (*client.ClusterHealth, error) {
				h, err := c.ClusterHealth(ctx)
				unhealthy = err == nil && !h.Healthy
				return h, err
			},
			printCluster)
		if err == nil && unhealthy {
			return errors.New("the shard cluster is unhealthy")
		}
		return err
	}
	cmd.AddCommand(withWatch(status))
	return cmd
}

func printCluster(w io.Writer, h *client.ClusterHealth) error {
	tw := newTable(w)
	health := "healthy"
	if !h.Healthy {
		health = "unhealthy"
	}
	fmt.Fprintf(tw, "SHARD\t%s\n", h.ShardID)
	fmt.Fprintf(tw, "LEADER\t%s\n", orDash(h.LeaderID))
	fmt.Fprintf(tw, "HEALTH\t%s\n", health)
	fmt.Fprintf(tw, "MEMBERS\t%d\n", len(h.Nodes))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = newTable(w)
	fmt.Fprintln(tw, "NODE\tROLE\tSTATUS\tAPPLIED\tLAG\tCONTACT")
	for _, n := range h.Nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", n.ID, n.Role, n.Status, logIndex(n.AppliedIndex), logIndex(n.Lag), sinceMS(n.SinceContactMS))
	}
	return tw.Flush()
}

// logIndex shows a log index or a count of entries, "-" when not known.
func logIndex(v *uint64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatUint(*v, 10)
}

// sinceMS shows milliseconds ago as "250ms ago" or "3.2s ago", "-" when
// not known.
func sinceMS(ms *int64) string {
	if ms == nil {
		return "-"
	}
	d := time.Duration(*ms) * time.Millisecond
	if d >= time.Second {
		d = d.Round(100 * time.Millisecond)
	}
	return d.String() + " ago"
}

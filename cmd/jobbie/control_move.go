package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/wire"
)

// Live namespace moves on the command line (operator): jobbie control
// move starts one, jobbie control moves lists, shows and cancels them.
// They call control's /control/v1 move routes with the operator key.

// moveWaitPoll is how often --wait reads the move.
const moveWaitPoll = 500 * time.Millisecond

func controlMoveCmd() *cobra.Command {
	var tenant, namespace, to string
	var wait bool
	cmd := &cobra.Command{
		Use:   "move --tenant T --namespace N --to SHARD [--wait]",
		Short: "Move a namespace to another shard while it serves (operator)",
		Long: `move copies a namespace to another shard while producers and workers keep
running: a snapshot, then the changes since, then a brief hold of its writes
for the last changes, then its placement switches and the source's copy is
removed. It prints the move; with --wait it follows it to its end (exit
status 1 unless it completed). A move can be cancelled until it switches:
jobbie control moves cancel ID. Self-hosted shards cannot take part.`,
		Args: cobra.NoArgs,
	}
	o := addOpFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := o.client()
		if err != nil {
			return err
		}
		body, _ := json.Marshal(wire.NamespaceMoveRequest{ToShard: to})
		var m wire.Move
		if _, err := c.do(http.MethodPost, "/control/v1/namespaces/"+url.PathEscape(tenant)+"/"+url.PathEscape(namespace)+"/move", body, &m); err != nil {
			return err
		}
		if !wait {
			return printMoves(cmd.OutOrStdout(), c.json, m)
		}
		return waitMove(cmd, c, m)
	}
	f := cmd.Flags()
	f.StringVar(&tenant, "tenant", "", "the namespace's tenant id (required)")
	f.StringVar(&namespace, "namespace", "", "the namespace to move (required)")
	f.StringVar(&to, "to", "", "the id of the shard to move it to (required)")
	f.BoolVar(&wait, "wait", false, "follow the move until it ends, printing each change of state")
	_ = cmd.MarkFlagRequired("tenant")
	_ = cmd.MarkFlagRequired("namespace")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// waitMove prints m, then each change of its state until it ends.
func waitMove(cmd *cobra.Command, c *opClient, m wire.Move) error {
	out := cmd.OutOrStdout()
	last := ""
	for {
		if m.State != last {
			last = m.State
			if c.json {
				if err := writeJSON(out, m); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(out, "%s  %s  rounds %d  records %d  bytes %d%s\n", time.Now().UTC().Format(time.TimeOnly), m.State,
					m.Rounds, m.Records, m.Bytes, moveTail(m))
			}
		}
		switch m.State {
		case wire.MoveCompleted:
			return nil
		case wire.MoveFailed, wire.MoveCancelled:
			return fmt.Errorf("move %s %s%s", m.ID, m.State, moveTail(m))
		}
		select {
		case <-cmd.Context().Done():
			return cmd.Context().Err()
		case <-time.After(moveWaitPoll):
		}
		if _, err := c.do(http.MethodGet, "/control/v1/moves/"+url.PathEscape(m.ID), nil, &m); err != nil {
			return err
		}
	}
}

// moveTail is the pause and error of a move, when it has them.
func moveTail(m wire.Move) string {
	s := ""
	if m.PauseMS > 0 {
		s += fmt.Sprintf("  pause %d ms", m.PauseMS)
	}
	if m.Error != "" {
		s += ": " + m.Error
	}
	return s
}

func controlMovesCmd() *cobra.Command {
	var tenant, namespace, state string
	cmd := &cobra.Command{
		Use:   "moves [ID]",
		Short: "List namespace moves, newest first, or show one (operator)",
		Long: `moves lists the live namespace moves, newest first (--tenant, --namespace and
--state narrow the list), or shows the one named.

  jobbie control moves
  jobbie control moves --tenant t_… --state completed
  jobbie control moves mov_…
  jobbie control moves cancel mov_…`,
		Args: cobra.MaximumNArgs(1),
	}
	o := addOpFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := o.client()
		if err != nil {
			return err
		}
		if len(args) == 1 {
			var m wire.Move
			if _, err := c.do(http.MethodGet, "/control/v1/moves/"+url.PathEscape(args[0]), nil, &m); err != nil {
				return err
			}
			return printMoves(cmd.OutOrStdout(), c.json, m)
		}
		q := url.Values{}
		for k, v := range map[string]string{"tenant": tenant, "namespace": namespace, "state": state} {
			if v != "" {
				q.Set(k, v)
			}
		}
		var l wire.MoveList
		if _, err := c.do(http.MethodGet, "/control/v1/moves?"+q.Encode(), nil, &l); err != nil {
			return err
		}
		if c.json {
			return writeJSON(cmd.OutOrStdout(), l)
		}
		return printMoves(cmd.OutOrStdout(), false, l.Moves...)
	}
	f := cmd.Flags()
	f.StringVar(&tenant, "tenant", "", "only this tenant's moves")
	f.StringVar(&namespace, "namespace", "", "only moves of namespaces of this name")
	f.StringVar(&state, "state", "", "only moves in this state (copying, catching_up, fenced, switched, completed, cancelled, failed)")
	cmd.AddCommand(&cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a move before it switches: the target's copy is removed, the namespace stays where it was",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			var m wire.Move
			if _, err := c.do(http.MethodPost, "/control/v1/moves/"+url.PathEscape(args[0])+"/cancel", nil, &m); err != nil {
				return err
			}
			return printMoves(cmd.OutOrStdout(), c.json, m)
		},
	})
	return cmd
}

// printMoves prints moves as a table, or one move as JSON.
func printMoves(out io.Writer, asJSON bool, moves ...wire.Move) error {
	if asJSON && len(moves) == 1 {
		return writeJSON(out, moves[0])
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTENANT\tNAMESPACE\tFROM\tTO\tSTATE\tROUNDS\tRECORDS\tBYTES\tPAUSE MS\tCREATED\tERROR")
	for _, m := range moves {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", m.ID, m.TenantID, m.Namespace, m.FromShard, m.ToShard, m.State,
			m.Rounds, m.Records, m.Bytes, m.PauseMS, m.CreatedAt.UTC().Format(time.RFC3339), m.Error)
	}
	return tw.Flush()
}

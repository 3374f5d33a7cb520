package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
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
	op := addConn(cmd, controlAPI)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := op.client()
		if err != nil {
			return err
		}
		defer c.CloseIdleConnections()
		m, err := c.MoveNamespace(cmd.Context(), tenant, namespace, to)
		if err != nil {
			return controlError(err)
		}
		if !wait {
			return printMoves(cmd.OutOrStdout(), op.json(), *m)
		}
		return waitMove(cmd, c, op.json(), *m)
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
func waitMove(cmd *cobra.Command, c *client.Client, asJSON bool, m client.Move) error {
	out := cmd.OutOrStdout()
	last := ""
	for {
		if m.State != last {
			last = m.State
			if asJSON {
				if err := writeJSON(out, m); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(out, "%s  %s  rounds %d  records %d  bytes %d%s\n", time.Now().UTC().Format(time.TimeOnly), m.State,
					m.Rounds, m.Records, m.Bytes, moveTail(m))
			}
		}
		switch m.State {
		case client.MoveCompleted:
			return nil
		case client.MoveFailed, client.MoveCancelled:
			return fmt.Errorf("move %s %s%s", m.ID, m.State, moveTail(m))
		}
		select {
		case <-cmd.Context().Done():
			return cmd.Context().Err()
		case <-time.After(moveWaitPoll):
		}
		next, err := c.GetMove(cmd.Context(), m.ID)
		if err != nil {
			return controlError(err)
		}
		m = *next
	}
}

// moveTail is the pause and error of a move, when it has them.
func moveTail(m client.Move) string {
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
	var q client.MoveQuery
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
	op := addConn(cmd, controlAPI)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 {
			return runMove(cmd, op, func(ctx context.Context, c *client.Client) (*client.Move, error) { return c.GetMove(ctx, args[0]) })
		}
		return runAPI(cmd, op, "", "", func(ctx context.Context, c *client.Client) (wire.MoveList, error) {
			moves, err := c.ListMoves(ctx, q)
			return wire.MoveList{Moves: moves}, err
		}, func(w io.Writer, l wire.MoveList) error { return printMoves(w, false, l.Moves...) })
	}
	f := cmd.Flags()
	f.StringVar(&q.Tenant, "tenant", "", "only this tenant's moves")
	f.StringVar(&q.Namespace, "namespace", "", "only moves of namespaces of this name")
	f.StringVar(&q.State, "state", "", "only moves in this state (copying, catching_up, fenced, switched, completed, cancelled, failed)")
	cmd.AddCommand(&cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a move before it switches: the target's copy is removed, the namespace stays where it was",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMove(cmd, op, func(ctx context.Context, c *client.Client) (*client.Move, error) { return c.CancelMove(ctx, args[0]) })
		},
	})
	return cmd
}

// runMove makes a call that answers one move, and prints it.
func runMove(cmd *cobra.Command, op *Conn, call func(context.Context, *client.Client) (*client.Move, error)) error {
	return runAPI(cmd, op, "", "", call, func(w io.Writer, m *client.Move) error { return printMoves(w, false, *m) })
}

// printMoves prints moves as a table, or one move as JSON.
func printMoves(out io.Writer, asJSON bool, moves ...client.Move) error {
	if asJSON && len(moves) == 1 {
		return writeJSON(out, moves[0])
	}
	tw := newTable(out)
	fmt.Fprintln(tw, "ID\tTENANT\tNAMESPACE\tFROM\tTO\tSTATE\tROUNDS\tRECORDS\tBYTES\tPAUSE MS\tCREATED\tERROR")
	for _, m := range moves {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", m.ID, m.TenantID, m.Namespace, m.FromShard, m.ToShard, m.State,
			m.Rounds, m.Records, m.Bytes, m.PauseMS, m.CreatedAt.UTC().Format(time.RFC3339), m.Error)
	}
	return tw.Flush()
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// Helpers shared by the commands: one API call each, printed as JSON or a
// table, and the checks of their arguments.

// runAPI builds the client from conn, makes one call and prints its
// answer: as JSON with --output json, else with table. what prefixes an
// error ("job job_1"); act is the permission the call needs, named in the
// hint of a 403.
func runAPI[T any](cmd *cobra.Command, conn *Conn, what string, act tenancy.Action,
	call func(context.Context, *client.Client) (T, error), table func(io.Writer, T) error) error {
	word := func(err error) error { return refused(err, act) }
	if conn.ep == controlAPI {
		word = controlError
	}
	interval, err := watchInterval(cmd)
	if err != nil {
		return err
	}
	c, err := conn.client()
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	out := cmd.OutOrStdout()
	frame := func(ctx context.Context) error {
		v, err := call(ctx, c)
		if err != nil {
			err = word(err)
			if what != "" {
				err = fmt.Errorf("%s: %w", what, err)
			}
			return err
		}
		if conn.json() {
			return writeJSON(out, v)
		}
		return table(out, v)
	}
	if interval > 0 {
		return watch(cmd.Context(), out, !conn.json(), interval, frame)
	}
	return frame(cmd.Context())
}

// CheckID refuses an id that cannot name anything: empty, or with blanks
// (a pasted table row).
func CheckID(kind, id string) error {
	if strings.TrimSpace(id) == "" {
		return fmt.Errorf("the %s id is empty", kind)
	}
	if strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' }) {
		return fmt.Errorf("%s id %q holds blanks or control characters", kind, id)
	}
	return nil
}

// errNoConfirm is the refusal of a destructive command without --confirm.
var errNoConfirm = errors.New("this deletes for good: add --confirm")

// exactArgs is cobra.ExactArgs with the usage line in its error.
func exactArgs(n int) cobra.PositionalArgs { return argsBetween(n, n) }

// argsBetween wants lo to hi arguments, and names them when it gets
// another number.
func argsBetween(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= lo && len(args) <= hi {
			return nil
		}
		want := plural(hi, "argument")
		if lo != hi {
			want = fmt.Sprintf("%d or %d arguments", lo, hi)
		}
		path := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
		return fmt.Errorf("%s takes %s, not %d: %s", path, want, len(args), cmd.UseLine())
	}
}

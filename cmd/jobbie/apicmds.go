package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// Helpers shared by the job, queue, worker, schedule, key, namespace and
// status commands: one API call each, printed as JSON or a table.

// runAPI builds the client from api, makes one call and prints its
// answer: as JSON with --output json, else with table. what prefixes an
// error ("job job_1"); act is the permission the call needs, named in the
// hint of a 403.
func runAPI[T any](cmd *cobra.Command, api *apiFlags, what string, act tenancy.Action,
	call func(context.Context, *client.Client) (T, error), table func(io.Writer, T) error) error {
	c, err := api.client()
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	v, err := call(cmd.Context(), c)
	if err != nil {
		err = refused(err, act)
		if what != "" {
			err = fmt.Errorf("%s: %w", what, err)
		}
		return err
	}
	if api.json() {
		return writeJSON(cmd.OutOrStdout(), v)
	}
	return table(cmd.OutOrStdout(), v)
}

// refused is apiError with a hint on a 403: the built-in roles whose keys
// may do act, since the fix is another key.
func refused(err error, act tenancy.Action) error {
	if !client.IsForbidden(err) || act == "" {
		return apiError(err)
	}
	msg, _ := strings.CutPrefix(err.Error(), "jobbie: ")
	return &wordedError{msg: fmt.Sprintf("%s (this needs a key with %s: %s)", msg, act, orList(rolesWith(act))), err: err}
}

// rolesWith lists the built-in roles granted act, from the one RBAC
// policy table.
func rolesWith(act tenancy.Action) []string {
	var out []string
	for _, r := range tenancy.TenantRoles {
		for _, p := range tenancy.BuiltinPermissions(r) {
			if slices.ContainsFunc(p.Actions, func(a string) bool { return tenancy.MatchPattern(a, string(act)) }) {
				out = append(out, string(r))
				break
			}
		}
	}
	return out
}

// orList is "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// newTable is the tabwriter every table here uses.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// stamp shows a time in UTC to the second, "-" when absent.
func stamp(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// checkID refuses an id that cannot name anything: empty, or with blanks
// (a pasted table row).
func checkID(kind, id string) error {
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

// plural is "1 job", "2 jobs".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

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

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
	"github.com/jobbie/jobbie/wire"
)

// `jobbie namespaces egress`: a namespace's egress allow-list, the hosts
// its push queues and webhooks may call. The server judges each entry
// (a 400 naming egress_allow[i]); the command checks only what it must
// send.

func namespacesEgressCmd(api *Conn) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "egress",
		Short: "Show, set or clear a namespace's egress allow-list",
		Long: `egress shows or replaces the hosts a namespace's push queues and webhooks
may call: host names (matched exactly), "*.domain" patterns (any
subdomain) and IP addresses, at most 64. With none, any public host may
be called; the list only narrows that.

  jobbie namespaces egress get orders
  jobbie namespaces egress set orders --allow hooks.example.com --allow '*.example.net'
  jobbie namespaces egress clear orders      # none: any public host again`,
		Args: cobra.NoArgs,
	}
	get := &cobra.Command{
		Use: "get <namespace>", Short: "Show a namespace's egress allow-list", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return putEgress(cmd, api, args[0], tenancy.ActNamespaceRead, nil, false)
		},
	}
	clearCmd := &cobra.Command{
		Use: "clear <namespace>", Short: "Remove a namespace's egress allow-list: any public host may be called", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return putEgress(cmd, api, args[0], tenancy.ActNamespaceManage, []string{}, true)
		},
	}
	cmd.AddCommand(get, namespacesEgressSetCmd(api), clearCmd)
	return cmd
}

func namespacesEgressSetCmd(api *Conn) *cobra.Command {
	var allow []string
	cmd := &cobra.Command{
		Use:   "set <namespace> --allow HOST [--allow HOST]…",
		Short: "Replace a namespace's egress allow-list",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(allow) == 0 {
				return errors.New("nothing to set: give --allow once per host, or `jobbie namespaces egress clear` to remove the list")
			}
			return putEgress(cmd, api, args[0], tenancy.ActNamespaceManage, allow, true)
		},
	}
	// StringArray, not StringSlice: a comma is not a separator here, so a
	// bad entry reaches the server and is named as the user typed it.
	cmd.Flags().StringArrayVar(&allow, "allow", nil, "a host name, a '*.domain' pattern or an IP address (repeat for each)")
	return cmd
}

// putEgress reads namespace ns's list, or replaces it with allow when
// set, and prints the list as the API then holds it.
func putEgress(cmd *cobra.Command, api *Conn, ns string, act tenancy.Action, allow []string, set bool) error {
	if err := tenancy.ValidateNamespace(ns); err != nil {
		return err
	}
	return runAPI(cmd, api, "egress allow-list of namespace "+ns, act,
		func(ctx context.Context, c *client.Client) (wire.NamespaceEgress, error) {
			var (
				held []string
				err  error
			)
			if set {
				held, err = c.PutNamespaceEgress(ctx, ns, allow)
			} else {
				held, err = c.GetNamespaceEgress(ctx, ns)
			}
			return wire.NamespaceEgress{EgressAllow: held}, err
		},
		func(w io.Writer, e wire.NamespaceEgress) error { return printEgress(w, ns, e.EgressAllow) })
}

func printEgress(w io.Writer, ns string, allow []string) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "NAMESPACE\t%s\n", ns)
	if len(allow) == 0 {
		fmt.Fprintln(tw, "EGRESS ALLOW\tnone: any public host")
	} else {
		fmt.Fprintf(tw, "EGRESS ALLOW\t%s\n", strings.Join(allow, ", "))
	}
	return tw.Flush()
}

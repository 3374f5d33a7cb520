package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// namespacesCmd is `jobbie namespaces`: the tenant's namespaces, listed,
// created, shown and deleted. The name is an argument here, not
// --namespace, which stays the namespace the request is made in.
func namespacesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "namespaces",
		Short: "List namespaces; create, get or delete one; its egress allow-list",
		Long: `namespaces lists the tenant's namespaces the key may use.

  jobbie namespaces create orders --retention 168h --deletion-protection
  jobbie namespaces create edge --shard shd_01…     # on one of the tenant's self-hosted shards
  jobbie namespaces get orders
  jobbie namespaces delete staging --force           # with its jobs, queues and schedules
  jobbie namespaces egress set orders --allow hooks.example.com   # the hosts its push queues and webhooks may call`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runAPI(cmd, api, "namespaces", tenancy.ActNamespaceRead,
			func(ctx context.Context, c *client.Client) ([]client.Namespace, error) {
				ns, err := c.ListNamespaces(ctx)
				if ns == nil {
					ns = []client.Namespace{}
				}
				return ns, err
			},
			func(w io.Writer, ns []client.Namespace) error { return printNamespaces(w, ns...) })
	}
	get := &cobra.Command{
		Use: "get <name>", Short: "Show a namespace", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := tenancy.ValidateNamespace(args[0]); err != nil {
				return err
			}
			return runAPI(cmd, api, "namespace "+args[0], tenancy.ActNamespaceRead,
				func(ctx context.Context, c *client.Client) (*client.Namespace, error) {
					return c.GetNamespace(ctx, args[0])
				},
				func(w io.Writer, n *client.Namespace) error { return printNamespaces(w, *n) })
		},
	}
	cmd.AddCommand(namespacesCreateCmd(api), get, namespacesDeleteCmd(api), namespacesEgressCmd(api))
	return cmd
}

func namespacesCreateCmd(api *Conn) *cobra.Command {
	var (
		req   client.CreateNamespaceRequest
		shard string
	)
	cmd := &cobra.Command{
		Use: "create <name>", Short: "Create a namespace", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Name = args[0]
			if err := tenancy.ValidateNamespace(req.Name); err != nil {
				return err
			}
			if req.Retention < 0 || req.Retention > 0 && req.Retention < time.Minute {
				return fmt.Errorf("--retention must be 1m to 87600h, not %s", req.Retention)
			}
			if shard != "" {
				if err := CheckID("shard", shard); err != nil {
					return err
				}
			}
			return runAPI(cmd, api, "create namespace "+req.Name, tenancy.ActNamespaceManage,
				func(ctx context.Context, c *client.Client) (*client.Namespace, error) {
					if shard != "" {
						return c.CreateNamespaceOnWith(ctx, req, shard)
					}
					return c.CreateNamespaceWith(ctx, req)
				},
				func(w io.Writer, n *client.Namespace) error { return printNamespaces(w, *n) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Description, "description", "", "free text")
	f.DurationVar(&req.Retention, "retention", 0, "keep finished jobs this long by default, 1m to 87600h (default: none)")
	f.BoolVar(&req.DeletionProtection, "deletion-protection", false, "refuse to delete the namespace until this is turned off")
	f.StringVar(&shard, "shard", "", "create it on this self-hosted shard of the tenant's (its id)")
	return cmd
}

func namespacesDeleteCmd(api *Conn) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "delete <name>",
		Short: "Delete a namespace (--force: with its jobs, queues and schedules)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := tenancy.ValidateNamespace(name); err != nil {
				return err
			}
			return runAPI(cmd, api, "namespace "+name, tenancy.ActNamespaceManage,
				func(ctx context.Context, c *client.Client) (deleted, error) {
					err := c.DeleteNamespace(ctx, name, force)
					if client.ErrorCode(err) == client.CodeNamespaceNotEmpty {
						err = &wordedError{msg: apiError(err).Error() + " (--force deletes it with them)", err: err}
					}
					return deleted{ID: name, Deleted: err == nil}, err
				},
				func(w io.Writer, d deleted) error {
					_, err := fmt.Fprintf(w, "namespace %s deleted\n", d.ID)
					return err
				})
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "delete the namespace with its jobs, queues and schedules")
	return cmd
}

func printNamespaces(w io.Writer, ns ...client.Namespace) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tRETENTION\tPROTECTED\tCREATED\tDESCRIPTION")
	for _, n := range ns {
		fmt.Fprintf(tw, "%s\t%s\t%t\t%s\t%s\n", n.Name, orDash(n.Retention), n.DeletionProtection, stamp(&n.CreatedAt),
			orDash(oneLine(n.Description, 60)))
	}
	return tw.Flush()
}

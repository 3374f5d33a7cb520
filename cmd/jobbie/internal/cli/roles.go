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

// rolesCmd is `jobbie roles`: the built-in roles and the tenant's custom
// ones, listed, shown, created, updated and deleted.
func rolesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "roles",
		Short: "List roles; get, create, update or delete a custom role",
		Long: `roles lists the built-in roles, then the tenant's custom roles. A custom
role is the union of its permissions; each --permission is
ACTIONS:NAMESPACES:QUEUES, each a comma-separated list of patterns ("*",
a name, or a prefix ending in "*"):

  jobbie roles
  jobbie roles get emails-ops
  jobbie roles create emails-ops --description 'runs the email queues' \
    --permission 'job.*,queue.read:*:emails.*' --permission 'queue.manage:prod:emails.send'
  jobbie roles update emails-ops --permission 'job.read:*:*'
  jobbie roles delete emails-ops

The key that creates or updates a role must hold every permission it
grants; a role live keys carry cannot be deleted.`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runAPI(cmd, api, "roles", tenancy.ActKeyRead,
			func(ctx context.Context, c *client.Client) ([]client.Role, error) {
				rs, err := c.ListRoles(ctx)
				if rs == nil {
					rs = []client.Role{}
				}
				return rs, err
			},
			printRoles)
	}
	get := &cobra.Command{
		Use: "get <name>", Short: "Show a role and its permissions", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := CheckID("role", args[0]); err != nil {
				return err
			}
			return runAPI(cmd, api, "role "+args[0], tenancy.ActKeyRead,
				func(ctx context.Context, c *client.Client) (*client.Role, error) { return c.GetRole(ctx, args[0]) },
				printRole)
		},
	}
	write := func(use, short string, call func(*client.Client, context.Context, client.Role) (*client.Role, error)) *cobra.Command {
		var desc string
		var perms []string
		c := &cobra.Command{
			Use: use + " <name> --permission ACTIONS:NAMESPACES:QUEUES…", Short: short, Args: exactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := tenancy.ValidateRoleName(args[0]); err != nil {
					return err
				}
				ps, err := parsePermissions(perms)
				if err != nil {
					return err
				}
				r := client.Role{Name: args[0], Description: desc, Permissions: ps}
				return runAPI(cmd, api, use+" role "+args[0], tenancy.ActKeyManage,
					func(ctx context.Context, c *client.Client) (*client.Role, error) { return call(c, ctx, r) },
					printRole)
			},
		}
		c.Flags().StringVar(&desc, "description", "", "what the role is for")
		c.Flags().StringArrayVar(&perms, "permission", nil, "ACTIONS:NAMESPACES:QUEUES (again for more)")
		return c
	}
	del := &cobra.Command{
		Use: "delete <name>", Short: "Delete a custom role (refused while live keys carry it)", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := tenancy.ValidateRoleName(args[0]); err != nil {
				return err
			}
			return runAPI(cmd, api, "role "+args[0], tenancy.ActKeyManage,
				func(ctx context.Context, c *client.Client) (deleted, error) {
					return deleted{ID: args[0], Deleted: true}, c.DeleteRole(ctx, args[0])
				},
				func(w io.Writer, d deleted) error {
					_, err := fmt.Fprintf(w, "role %s deleted\n", d.ID)
					return err
				})
		},
	}
	cmd.AddCommand(get,
		write("create", "Create a custom role", (*client.Client).CreateRole),
		write("update", "Replace a custom role's description and permissions", (*client.Client).UpdateRole),
		del)
	return cmd
}

// parsePermissions reads --permission flags, checked as the server
// checks them, so a bad one sends nothing.
func parsePermissions(flags []string) ([]client.Permission, error) {
	var ps []client.Permission
	var tps []tenancy.Permission
	for _, f := range flags {
		parts := strings.Split(f, ":")
		if len(parts) != 3 {
			return nil, fmt.Errorf("--permission %q: want ACTIONS:NAMESPACES:QUEUES (job.read,job.enqueue:*:emails.*)", f)
		}
		split := func(s string) []string {
			var out []string
			for _, p := range strings.Split(s, ",") {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
			return out
		}
		p := client.Permission{Actions: split(parts[0]), Namespaces: split(parts[1]), Queues: split(parts[2])}
		ps = append(ps, p)
		tps = append(tps, tenancy.Permission{Actions: p.Actions, Namespaces: p.Namespaces, Queues: p.Queues})
	}
	if err := tenancy.ValidatePermissions(tps); err != nil {
		return nil, fmt.Errorf("--permission: %w", err)
	}
	return ps, nil
}

func printRoles(w io.Writer, rs []client.Role) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tKIND\tPERMISSIONS\tDESCRIPTION")
	for _, r := range rs {
		kind := "custom"
		if r.Builtin {
			kind = "built-in"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", r.Name, kind, len(r.Permissions), orDash(oneLine(r.Description, 60)))
	}
	return tw.Flush()
}

func printRole(w io.Writer, r *client.Role) error {
	tw := newTable(w)
	kind := "custom"
	if r.Builtin {
		kind = "built-in"
	}
	fmt.Fprintf(tw, "ROLE\t%s (%s)\n", r.Name, kind)
	if r.Description != "" {
		fmt.Fprintf(tw, "DESCRIPTION\t%s\n", oneLine(r.Description, 100))
	}
	for _, p := range r.Permissions {
		fmt.Fprintf(tw, "PERMISSION\t%s:%s:%s\n", strings.Join(p.Actions, ","), strings.Join(p.Namespaces, ","), strings.Join(p.Queues, ","))
	}
	return tw.Flush()
}

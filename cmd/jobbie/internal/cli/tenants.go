package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
)

// tenantsCmd is `jobbie tenants` (operator): a new tenant, a tenant's
// plan.
func tenantsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "tenants", Short: "Tenants on the control plane (operator)"}
	op := addConn(cmd, controlAPI)
	var plan string
	create := &cobra.Command{
		Use: "create NAME", Short: "Create a tenant (on --plan from its creation); prints its owner key once", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAPI(cmd, op, "", "", func(ctx context.Context, c *client.Client) (*client.CreatedTenant, error) {
				return c.CreateTenantOnPlan(ctx, args[0], plan)
			}, func(w io.Writer, ct *client.CreatedTenant) error {
				_, err := fmt.Fprintf(w, "tenant %s (%s)\nowner key (shown once): %s\n", ct.Tenant.Name, ct.Tenant.ID, ct.OwnerKey)
				return err
			})
		},
	}
	create.Flags().StringVar(&plan, "plan", "", "the tenant's plan from its creation (default: the free plan)")
	cmd.AddCommand(create)
	cmd.AddCommand(&cobra.Command{
		Use: "set-plan TENANT_ID PLAN", Short: "Move a tenant to a plan from the next UTC hour", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAPI(cmd, op, "", "", func(ctx context.Context, c *client.Client) (*client.TenantPlan, error) {
				return c.SetTenantPlan(ctx, args[0], args[1])
			}, printPlanChange)
		},
	})
	return cmd
}

func printPlanChange(w io.Writer, tp *client.TenantPlan) error {
	var err error
	if tp.Next != nil && tp.NextFrom != nil {
		_, err = fmt.Fprintf(w, "tenant %s: on %s until %s, then %s\n", tp.TenantID, tp.Plan.Name, tp.NextFrom.UTC().Format(time.RFC3339), tp.Next.Name)
	} else {
		_, err = fmt.Fprintf(w, "tenant %s: on %s\n", tp.TenantID, tp.Plan.Name)
	}
	return err
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
)

// Operator commands on the control plane's API: plans, and tenants and
// their plans (tenants.go). They take the operator key and trust the
// deployment's CA (the Control API's flags).

func plansCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plans",
		Short: "List, show and put plans on the control plane (operator)",
		Long: `Plans are the operator's: prices per meter, included amounts and limits.
A new plan or an edit takes effect from the start of the next UTC hour.

  jobbie plans list
  jobbie plans show pro
  jobbie plans put pro.json      # creates it, or replaces it (a new version)
  jobbie plans put - < pro.json`,
	}
	op := addConn(cmd, controlAPI)
	cmd.AddCommand(&cobra.Command{
		Use: "list", Short: "List every plan's latest version", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAPI(cmd, op, "", "", func(ctx context.Context, c *client.Client) (planList, error) {
				plans, err := c.ListPlans(ctx)
				return planList{Plans: plans}, err
			}, printPlans)
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use: "show NAME", Short: "Show a plan as JSON", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAPI(cmd, op, "", "", func(ctx context.Context, c *client.Client) (*client.PlanView, error) {
				return c.GetPlanByName(ctx, args[0])
			}, func(w io.Writer, p *client.PlanView) error { return writeJSON(w, p) }) // JSON either way
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use: "put FILE", Short: "Create or replace a plan from a JSON file (- for stdin)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := op.client()
			if err != nil {
				return err
			}
			defer c.CloseIdleConnections()
			body, err := readPlanFile(cmd, args[0])
			if err != nil {
				return err
			}
			var p client.Plan
			if err := json.Unmarshal(body, &p); err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if p.Name == "" {
				return fmt.Errorf("%s: the plan has no name", args[0])
			}
			pv, err := c.PutPlanJSON(cmd.Context(), p.Name, body)
			if err != nil {
				return controlError(err)
			}
			if op.json() {
				return writeJSON(cmd.OutOrStdout(), pv)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "plan %s version %d, in effect from %s\n", pv.Name, pv.Version, pv.EffectiveFrom.UTC().Format(time.RFC3339))
			return nil
		},
	})
	return cmd
}

// planList is `jobbie plans list -o json`: GET /control/v1/plans as it
// answers.
type planList struct {
	Plans []client.PlanView `json:"plans"`
}

func printPlans(w io.Writer, l planList) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tVERSION\tCURRENCY\tPRICED METERS\tEFFECTIVE FROM")
	for _, p := range l.Plans {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\n", p.Name, p.Version, p.Currency, len(p.Prices), p.EffectiveFrom.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

func readPlanFile(cmd *cobra.Command, path string) ([]byte, error) {
	if path == "-" {
		if isCharDevice(cmd.InOrStdin()) {
			return nil, errors.New("put -: pipe the plan's JSON in")
		}
		return io.ReadAll(io.LimitReader(cmd.InOrStdin(), 1<<20))
	}
	return os.ReadFile(path)
}

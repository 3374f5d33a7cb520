package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
)

// The tenant's invoices through the gateway: a UTC month of usage priced by
// its plan, as a table, JSON or CSV (usage.read on every namespace).

func invoicesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "invoices",
		Short: "List the tenant's invoices, show one, or export one as CSV",
		Long: `An invoice is a UTC month of usage priced by the tenant's plan. It is
open while the month runs (and until every shard has closed it), then
closed: frozen for good. Amounts are minor units of its currency.

  jobbie invoices list
  jobbie invoices upcoming              # this month so far
  jobbie invoices get inv_t_…_2026-10
  jobbie invoices csv inv_t_…_2026-10 --out 2026-10.csv`,
	}
	api := addConn(cmd, gatewayAPI)
	list := &cobra.Command{
		Use: "list", Short: "List every month's invoice, the running month first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			defer c.CloseIdleConnections()
			invs, err := c.ListInvoices(cmd.Context())
			if err != nil {
				return billingError(err)
			}
			if api.json() {
				return writeJSON(cmd.OutOrStdout(), invs) // an array, whatever its length
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tMONTH\tSTATUS\tTOTAL (minor units)\tCURRENCY")
			for _, s := range invs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", s.ID, s.Period.Start.UTC().Format("2006-01"), s.Status, s.Total, s.Currency)
			}
			return tw.Flush()
		},
	}
	show := func(get func(cmd *cobra.Command, c *client.Client, args []string) (*client.Invoice, error)) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			defer c.CloseIdleConnections()
			inv, err := get(cmd, c, args)
			if err != nil {
				return billingError(err)
			}
			if api.json() {
				return writeJSON(cmd.OutOrStdout(), inv)
			}
			return printInvoice(cmd.OutOrStdout(), inv)
		}
	}
	get := &cobra.Command{
		Use: "get ID", Short: "Show an invoice: its plan stretches, a line per meter and namespace, its total", Args: cobra.ExactArgs(1),
		RunE: show(func(cmd *cobra.Command, c *client.Client, args []string) (*client.Invoice, error) {
			return c.GetInvoice(cmd.Context(), args[0])
		}),
	}
	upcoming := &cobra.Command{
		Use: "upcoming", Short: "Show the running month's invoice so far", Args: cobra.NoArgs,
		RunE: show(func(cmd *cobra.Command, c *client.Client, _ []string) (*client.Invoice, error) {
			return c.UpcomingInvoice(cmd.Context())
		}),
	}
	cmd.AddCommand(list, get, upcoming, invoicesCSVCmd(api))
	return cmd
}

func invoicesCSVCmd(api *Conn) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use: "csv ID", Short: "Write an invoice as CSV (a header, then a row per line) to --out or stdout", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if api.json() {
				return errors.New("csv writes CSV: --output json does not apply (use invoices get ID -o json)")
			}
			c, err := api.client()
			if err != nil {
				return err
			}
			defer c.CloseIdleConnections()
			w := cmd.OutOrStdout()
			if out != "" {
				f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			n, err := c.InvoiceCSV(cmd.Context(), args[0], w)
			if err != nil {
				if out != "" {
					_ = os.Remove(out)
				}
				return billingError(err)
			}
			if out != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d bytes\n", n)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "file to write (it must not exist)")
	return cmd
}

// printInvoice writes an invoice's header, plan stretches, lines and
// totals. Quantities are the exact integers of the API, in their unit.
func printInvoice(w io.Writer, inv *client.Invoice) error {
	fmt.Fprintf(w, "invoice %s (%s), tenant %s\n", inv.ID, inv.Status, inv.TenantID)
	fmt.Fprintf(w, "period %s to %s, amounts in %s minor units\n",
		inv.Period.Start.UTC().Format(time.RFC3339), inv.Period.End.UTC().Format(time.RFC3339), inv.Currency)
	for _, p := range inv.Plans {
		fmt.Fprintf(w, "plan %s version %d (%s) from %s to %s\n", p.Name, p.Version, p.Currency,
			p.From.UTC().Format(time.RFC3339), p.To.UTC().Format(time.RFC3339))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLAN\tMETER\tNAMESPACE\tQUANTITY\tUNIT\tINCLUDED\tBILLABLE\tPRICE\tPER\tBILLED UNITS\tAMOUNT")
	for _, l := range inv.Lines {
		fmt.Fprintf(tw, "%s v%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%d\n", l.Plan, l.PlanVersion, l.Meter, orDash(l.Namespace),
			l.Quantity, l.QuantityUnit, l.IncludedApplied, l.Billable, l.UnitPrice, l.Unit, l.BilledUnits, l.Amount)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(inv.Lines) == 0 {
		fmt.Fprintln(w, "no usage in this period")
	}
	fmt.Fprintf(w, "subtotal %d, total %d %s\n", inv.Subtotal, inv.Total, inv.Currency)
	g := inv.GeneratedFrom
	fmt.Fprintf(w, "generated from the ledger: %d entries, %d hours with usage, closed through %s\n", g.LedgerEntries, g.LedgerHours, g.ClosedThrough.UTC().Format(time.RFC3339))
	return nil
}

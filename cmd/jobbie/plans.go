package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/wire"
)

// Operator commands on the control plane's API: plans, and a tenant's
// plan. They take the operator key and trust the deployment's CA.

const (
	envControlURL = "JOBBIE_CONTROL_URL"
	envOpKeyFile  = "JOBBIE_OPERATOR_KEY_FILE"
	envCA         = "JOBBIE_CA"
)

// opFlags are the flags of the operator commands.
type opFlags struct {
	url, keyFile, ca, output string
	cmd                      *cobra.Command
}

func addOpFlags(cmd *cobra.Command) *opFlags {
	o := &opFlags{cmd: cmd}
	f := cmd.PersistentFlags()
	f.StringVar(&o.url, "control", "https://127.0.0.1:8081", "control plane URL ($"+envControlURL+")")
	f.StringVar(&o.keyFile, "operator-key-file", "jobbie-data/operator.key", "file holding the operator key ($"+envOpKeyFile+")")
	f.StringVar(&o.ca, "ca", "jobbie-data/pki/ca.crt", "the deployment CA's certificate, which control's is signed by ($"+envCA+")")
	f.StringVarP(&o.output, "output", "o", outTable, "output format: table or json")
	return o
}

func (o *opFlags) value(name, env, val string) string {
	if o.cmd.PersistentFlags().Changed(name) {
		return val
	}
	if v := os.Getenv(env); v != "" {
		return v
	}
	return val
}

// opClient is a checked set of operator flags, ready to call control.
type opClient struct {
	base, key string
	http      *http.Client
	json      bool
}

func (o *opFlags) client() (*opClient, error) {
	if o.output != outTable && o.output != outJSON {
		return nil, fmt.Errorf("--output must be %s or %s, not %q", outTable, outJSON, o.output)
	}
	key, err := readKeyFile("--operator-key-file", o.value("operator-key-file", envOpKeyFile, o.keyFile))
	if err != nil {
		return nil, err
	}
	caFile := o.value("ca", envCA, o.ca)
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("--ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--ca: %s holds no PEM certificate", caFile)
	}
	return &opClient{
		base: strings.TrimRight(o.value("control", envControlURL, o.url), "/"), key: key, json: o.output == outJSON,
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}},
	}, nil
}

// do calls control; an error answer comes back as its message.
func (c *opClient) do(method, path string, body []byte, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode >= 300 {
		var e wire.ErrorBody
		if json.Unmarshal(raw, &e) == nil && e.Error != nil {
			msg := e.Error.Message
			if e.Error.Field != "" {
				msg += " (field " + e.Error.Field + ")"
			}
			return resp.StatusCode, fmt.Errorf("%s: %s", e.Error.Code, msg)
		}
		return resp.StatusCode, fmt.Errorf("control answered %d: %.200s", resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("control's answer: %w", err)
		}
	}
	return resp.StatusCode, nil
}

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
	o := addOpFlags(cmd)
	cmd.AddCommand(&cobra.Command{
		Use: "list", Short: "List every plan's latest version", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			var out struct {
				Plans []wire.PlanView `json:"plans"`
			}
			if _, err := c.do(http.MethodGet, "/control/v1/plans", nil, &out); err != nil {
				return err
			}
			if c.json {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVERSION\tCURRENCY\tPRICED METERS\tEFFECTIVE FROM")
			for _, p := range out.Plans {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\n", p.Name, p.Version, p.Currency, len(p.Prices), p.EffectiveFrom.UTC().Format(time.RFC3339))
			}
			return tw.Flush()
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use: "show NAME", Short: "Show a plan as JSON", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			var p wire.PlanView
			if _, err := c.do(http.MethodGet, "/control/v1/plans/"+url.PathEscape(args[0]), nil, &p); err != nil {
				return err
			}
			return writeJSON(cmd.OutOrStdout(), p)
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use: "put FILE", Short: "Create or replace a plan from a JSON file (- for stdin)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			body, err := readPlanFile(cmd, args[0])
			if err != nil {
				return err
			}
			var p wire.Plan
			if err := json.Unmarshal(body, &p); err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if p.Name == "" {
				return fmt.Errorf("%s: the plan has no name", args[0])
			}
			var out wire.PlanView
			// Replace when it exists; create on control's 404.
			status, err := c.do(http.MethodPut, "/control/v1/plans/"+url.PathEscape(p.Name), body, &out)
			if status == http.StatusNotFound {
				_, err = c.do(http.MethodPost, "/control/v1/plans", body, &out)
			}
			if err != nil {
				return err
			}
			if c.json {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "plan %s version %d, in effect from %s\n", out.Name, out.Version, out.EffectiveFrom.UTC().Format(time.RFC3339))
			return nil
		},
	})
	return cmd
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

func tenantsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "tenants", Short: "Tenants on the control plane (operator)"}
	o := addOpFlags(cmd)
	var plan string
	create := &cobra.Command{
		Use: "create NAME", Short: "Create a tenant (on --plan from its creation); prints its owner key once", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			body, _ := json.Marshal(wire.CreateTenantRequest{Name: args[0], Plan: plan})
			var ct wire.CreatedTenant
			if _, err := c.do(http.MethodPost, "/control/v1/tenants", body, &ct); err != nil {
				return err
			}
			if c.json {
				return writeJSON(cmd.OutOrStdout(), ct)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "tenant %s (%s)\nowner key (shown once): %s\n", ct.Tenant.Name, ct.Tenant.ID, ct.OwnerKey)
			return nil
		},
	}
	create.Flags().StringVar(&plan, "plan", "", "the tenant's plan from its creation (default: the free plan)")
	cmd.AddCommand(create)
	cmd.AddCommand(&cobra.Command{
		Use: "set-plan TENANT_ID PLAN", Short: "Move a tenant to a plan from the next UTC hour", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			body, _ := json.Marshal(wire.SetPlanRequest{Plan: args[1]})
			var tp wire.TenantPlan
			if _, err := c.do(http.MethodPut, "/control/v1/tenants/"+url.PathEscape(args[0])+"/plan", body, &tp); err != nil {
				return err
			}
			if c.json {
				return writeJSON(cmd.OutOrStdout(), tp)
			}
			if tp.Next != nil && tp.NextFrom != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "tenant %s: on %s until %s, then %s\n", tp.TenantID, tp.Plan.Name, tp.NextFrom.UTC().Format(time.RFC3339), tp.Next.Name)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "tenant %s: on %s\n", tp.TenantID, tp.Plan.Name)
			}
			return nil
		},
	})
	return cmd
}

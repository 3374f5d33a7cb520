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

// `jobbie tracing`: the OTLP endpoint of the request's namespace, the
// collector its jobs' spans go to (docs/api/namespaces.md). The server
// judges the URL (a 400 naming otlp_endpoint); the command checks only
// that one was given.

func tracingCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tracing",
		Short: "Show, set or clear the namespace's OTLP endpoint",
		Long: `tracing shows or changes where the spans of the namespace's jobs are sent:
an OpenTelemetry collector's OTLP/HTTP traces URL (https, a public
address, on the namespace's egress allow-list). It works on the key's
default namespace, or --namespace.

  jobbie tracing get
  jobbie tracing set https://otel.example.com/v1/traces --namespace orders
  jobbie tracing clear --namespace orders      # none: spans go nowhere

get needs namespace.read; set and clear namespace.manage (owner, admin).`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	get := &cobra.Command{
		Use: "get", Short: "Show the namespace's OTLP endpoint", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return callTracing(cmd, api, tenancy.ActNamespaceRead, func(ctx context.Context, c *client.Client) (string, error) {
				return c.GetTracing(ctx)
			})
		},
	}
	set := &cobra.Command{
		Use: "set <url>", Short: "Send the namespace's spans to this OTLP/HTTP traces URL", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			url := strings.TrimSpace(args[0])
			if url == "" {
				return errors.New("the URL is empty: give the collector's traces URL, or `jobbie tracing clear` to remove it")
			}
			return callTracing(cmd, api, tenancy.ActNamespaceManage, func(ctx context.Context, c *client.Client) (string, error) {
				return c.SetTracing(ctx, url)
			})
		},
	}
	clearCmd := &cobra.Command{
		Use: "clear", Short: "Remove the namespace's OTLP endpoint", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return callTracing(cmd, api, tenancy.ActNamespaceManage, func(ctx context.Context, c *client.Client) (string, error) {
				return c.SetTracing(ctx, "")
			})
		},
	}
	cmd.AddCommand(get, set, clearCmd)
	return cmd
}

// callTracing makes one call and prints the endpoint as the API then
// holds it (-o json: the API's answer).
func callTracing(cmd *cobra.Command, api *Conn, act tenancy.Action, call func(context.Context, *client.Client) (string, error)) error {
	ns := api.Namespace()
	return runAPI(cmd, api, "tracing", act,
		func(ctx context.Context, c *client.Client) (wire.NamespaceTracing, error) {
			u, err := call(ctx, c)
			return wire.NamespaceTracing{OTLPEndpoint: u}, err
		},
		func(w io.Writer, t wire.NamespaceTracing) error {
			tw := newTable(w)
			if ns != "" {
				fmt.Fprintf(tw, "NAMESPACE\t%s\n", ns)
			}
			endpoint := t.OTLPEndpoint
			if endpoint == "" {
				endpoint = "none"
			}
			fmt.Fprintf(tw, "OTLP ENDPOINT\t%s\n", endpoint)
			return tw.Flush()
		})
}

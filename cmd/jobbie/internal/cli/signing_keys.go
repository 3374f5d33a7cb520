package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// `jobbie signing-keys`: the public keys that sign the namespace's push
// deliveries and webhooks, and their rotation.

func signingKeysCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "signing-keys",
		Short: "List or rotate the namespace's keys that sign push deliveries and webhooks",
		Long: `signing-keys lists the public keys that sign the namespace's push deliveries
and webhooks (Standard Webhooks, Ed25519): give them to your handlers to
verify requests (client.NewWebhookVerifier in Go). rotate adds a new key;
the older ones go on signing beside it for 24 hours (NOT AFTER), so
handlers can move to the new key. These are not the keys that sign API
keys.

  jobbie signing-keys list
  jobbie signing-keys rotate`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	list := func(cmd *cobra.Command, _ []string) error {
		return runAPI(cmd, api, "signing keys", tenancy.ActWebhookRead, orEmpty((*client.Client).WebhookSigningKeys),
			printWebhookKeys)
	}
	cmd.RunE = list
	cmd.AddCommand(&cobra.Command{Use: "list", Short: "List the public signing keys in use, oldest first", Args: cobra.NoArgs, RunE: list},
		&cobra.Command{Use: "rotate", Short: "Add a new signing key; the others sign beside it for 24 hours", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return runAPI(cmd, api, "rotate signing keys", tenancy.ActWebhookManage,
					orEmpty((*client.Client).RotateWebhookSigningKeys), printWebhookKeys)
			}})
	return cmd
}

// orEmpty makes a list call answer [] rather than null as JSON.
func orEmpty(call func(*client.Client, context.Context) ([]client.WebhookKey, error)) func(context.Context, *client.Client) ([]client.WebhookKey, error) {
	return func(ctx context.Context, c *client.Client) ([]client.WebhookKey, error) {
		ks, err := call(c, ctx)
		if ks == nil {
			ks = []client.WebhookKey{}
		}
		return ks, err
	}
}

func printWebhookKeys(w io.Writer, ks []client.WebhookKey) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tSCHEME\tPUBLIC KEY\tNOT AFTER")
	for _, k := range ks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.ID, k.Scheme, k.Key, stamp(k.NotAfter))
	}
	return tw.Flush()
}

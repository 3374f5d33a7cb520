package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// `jobbie webhooks`: the namespace's lifecycle webhook endpoints, their
// delivery log, test events, redeliveries and secrets.

// webhookFlags are create's and update's settings; update changes only
// those given.
type webhookFlags struct {
	url, description string
	events, queues   []string
	allQueues        bool
	secret           bool
	enable, disable  bool
}

func webhooksCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "webhooks",
		Short: "List, create, change or delete webhook endpoints; their deliveries, tests and secrets",
		Long: `webhooks lists the namespace's lifecycle webhook endpoints: each receives the
events it subscribes to (of the queues it names, or all) as signed
CloudEvents. Its subcommands take an endpoint's id (wh_…):

  jobbie webhooks create --endpoint-url https://hooks.example.com/jobbie --event job.completed --event job.dead --queue 'emails.*' --secret
  jobbie webhooks update wh_01… --event '*' --description 'all outcomes'
  jobbie webhooks deliveries wh_01…          (its last attempts: status, latency, error)
  jobbie webhooks test wh_01…                (send a dev.jobbie.test event now)
  jobbie webhooks redeliver wh_01… s1:1234   (send one event of the log again)
  jobbie webhooks rotate-secret wh_01…       (a new whsec_ secret, shown once)
  jobbie webhooks delete wh_01…

Every subcommand needs a key whose role covers every queue of the
namespace: webhook.read to read, webhook.manage to change.`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	list := func(cmd *cobra.Command, _ []string) error {
		return runAPI(cmd, api, "webhooks", tenancy.ActWebhookRead,
			func(ctx context.Context, c *client.Client) ([]client.Webhook, error) {
				ws, err := c.ListWebhooks(ctx)
				if ws == nil {
					ws = []client.Webhook{}
				}
				return ws, err
			}, printWebhooks)
	}
	cmd.RunE = list
	// one runs call on the endpoint named by the first argument.
	one := func(use, short string, act tenancy.Action, call func(context.Context, *client.Client, string) (*client.Webhook, error)) *cobra.Command {
		return &cobra.Command{Use: use + " <id>", Short: short, Args: exactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := CheckID("webhook", args[0]); err != nil {
					return err
				}
				return runAPI(cmd, api, "webhook "+args[0], act,
					func(ctx context.Context, c *client.Client) (*client.Webhook, error) { return call(ctx, c, args[0]) },
					printWebhook)
			}}
	}
	get := one("get", "Show an endpoint, and why it is disabled if it is", tenancy.ActWebhookRead,
		func(ctx context.Context, c *client.Client, id string) (*client.Webhook, error) {
			return c.GetWebhook(ctx, id)
		})
	rotate := one("rotate-secret", "Give an endpoint a new whsec_ secret, shown once; the older ones sign beside it for 24 hours",
		tenancy.ActWebhookManage,
		func(ctx context.Context, c *client.Client, id string) (*client.Webhook, error) {
			return c.RotateWebhookSecret(ctx, id)
		})
	del := &cobra.Command{Use: "delete <id>", Short: "Delete an endpoint: nothing more is delivered to it", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := CheckID("webhook", args[0]); err != nil {
				return err
			}
			return runAPI(cmd, api, "webhook "+args[0], tenancy.ActWebhookManage,
				func(ctx context.Context, c *client.Client) (deleted, error) {
					return deleted{ID: args[0], Deleted: true}, c.DeleteWebhook(ctx, args[0])
				},
				func(w io.Writer, d deleted) error {
					_, err := fmt.Fprintf(w, "webhook %s deleted\n", d.ID)
					return err
				})
		}}
	cmd.AddCommand(&cobra.Command{Use: "list", Short: "List the namespace's endpoints", Args: cobra.NoArgs, RunE: list},
		get, webhookCreateCmd(api), webhookUpdateCmd(api), del, rotate)
	cmd.AddCommand(webhookDeliveriesCmd(api)...)
	return cmd
}

func (f *webhookFlags) bind(cmd *cobra.Command, create bool) {
	fs := cmd.Flags()
	fs.StringVar(&f.url, "endpoint-url", "", "the https URL events are POSTed to (--url is the gateway's)")
	fs.StringArrayVar(&f.events, "event", nil, `an event type to send (job.completed, job.dead, …), or "*" for all; repeat for more`)
	fs.StringArrayVar(&f.queues, "queue", nil, `a queue name, a prefix ending in * ("emails.*"), or "*"; repeat for more (none: every queue)`)
	fs.StringVar(&f.description, "description", "", "what the endpoint is for")
	fs.BoolVar(&f.disable, "disabled", false, "stop deliveries (the endpoint keeps its place in the event log)")
	if create {
		fs.BoolVar(&f.secret, "secret", false, "make a whsec_ secret that signs beside the namespace's keys (shown once)")
		return
	}
	fs.BoolVar(&f.allQueues, "all-queues", false, "subscribe to every queue again (drop the --queue patterns)")
	fs.BoolVar(&f.enable, "enabled", false, "deliver again (also after the endpoint was disabled for failing)")
}

func webhookCreateCmd(api *Conn) *cobra.Command {
	var f webhookFlags
	cmd := &cobra.Command{Use: "create", Short: "Add an endpoint", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req := client.WebhookRequest{URL: f.url, Events: f.events, Queues: f.queues, Description: f.description, Secret: f.secret}
			if f.disable {
				req.Enabled = new(false)
			}
			return runAPI(cmd, api, "create webhook", tenancy.ActWebhookManage,
				func(ctx context.Context, c *client.Client) (*client.Webhook, error) { return c.CreateWebhook(ctx, req) },
				printWebhook)
		}}
	f.bind(cmd, true)
	return cmd
}

func webhookUpdateCmd(api *Conn) *cobra.Command {
	var f webhookFlags
	cmd := &cobra.Command{Use: "update <id>", Args: exactArgs(1),
		Short: "Change an endpoint's settings; the others are kept",
		Long: `update reads the endpoint, changes what the flags give and replaces its
settings with the result (PUT /api/v1/webhooks/{id}). --event and --queue
replace the endpoint's lists. Any update enables again an endpoint that
was disabled for failing, unless it gives --disabled.

  jobbie webhooks update wh_01… --endpoint-url https://hooks.example.com/v2
  jobbie webhooks update wh_01… --event job.completed --event job.failed --all-queues
  jobbie webhooks update wh_01… --disabled`,
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if err := CheckID("webhook", id); err != nil {
				return err
			}
			if err := f.checkUpdate(cmd); err != nil {
				return err
			}
			return runAPI(cmd, api, "webhook "+id, tenancy.ActWebhookManage,
				func(ctx context.Context, c *client.Client) (*client.Webhook, error) {
					w, err := c.GetWebhook(ctx, id)
					if err != nil {
						return nil, err
					}
					return c.UpdateWebhook(ctx, id, f.applyTo(cmd, w))
				}, printWebhook)
		}}
	f.bind(cmd, false)
	return cmd
}

// checkUpdate refuses an update that would change nothing or contradicts
// itself, before anything is sent.
func (f *webhookFlags) checkUpdate(cmd *cobra.Command) error {
	given := false
	for _, n := range []string{"endpoint-url", "event", "queue", "all-queues", "description", "enabled", "disabled"} {
		given = given || cmd.Flags().Changed(n)
	}
	switch {
	case !given:
		return fmt.Errorf("nothing to change: give --endpoint-url, --event, --queue, --all-queues, --description, --enabled or --disabled")
	case f.enable && f.disable:
		return fmt.Errorf("--enabled cannot go with --disabled")
	case f.allQueues && len(f.queues) > 0:
		return fmt.Errorf("--all-queues cannot go with --queue")
	}
	return nil
}

// applyTo is w's settings changed by the flags given.
func (f *webhookFlags) applyTo(cmd *cobra.Command, w *client.Webhook) client.WebhookRequest {
	given := cmd.Flags().Changed
	req := client.WebhookRequest{URL: w.URL, Events: w.Events, Queues: w.Queues, Description: w.Description, Enabled: new(w.Enabled)}
	if given("endpoint-url") {
		req.URL = f.url
	}
	if given("event") {
		req.Events = f.events
	}
	if given("queue") {
		req.Queues = f.queues
	}
	if f.allQueues {
		req.Queues = nil
	}
	if given("description") {
		req.Description = f.description
	}
	if f.enable || f.disable {
		req.Enabled = new(f.enable)
	}
	return req
}

func printWebhooks(w io.Writer, ws []client.Webhook) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tURL\tEVENTS\tQUEUES\tSTATE\tDESCRIPTION")
	for _, h := range ws {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", h.ID, h.URL, strings.Join(h.Events, ","), webhookQueues(h.Queues),
			webhookState(&h), orDash(oneLine(h.Description, 40)))
	}
	return tw.Flush()
}

func printWebhook(w io.Writer, h *client.Webhook) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "WEBHOOK\t%s\n", h.ID)
	fmt.Fprintf(tw, "URL\t%s\n", h.URL)
	fmt.Fprintf(tw, "EVENTS\t%s\n", strings.Join(h.Events, ", "))
	fmt.Fprintf(tw, "QUEUES\t%s\n", webhookQueues(h.Queues))
	fmt.Fprintf(tw, "STATE\t%s\n", webhookState(h))
	if h.Description != "" {
		fmt.Fprintf(tw, "DESCRIPTION\t%s\n", oneLine(h.Description, 100))
	}
	if d := h.Disabled; d != nil {
		fmt.Fprintf(tw, "DISABLED\tsince %s: %s (`jobbie webhooks update <id> --enabled` enables it again)\n",
			d.At.UTC().Format(time.RFC3339), oneLine(d.Reason, 200))
	}
	if h.FailingSince != nil {
		fmt.Fprintf(tw, "FAILING SINCE\t%s\n", stamp(h.FailingSince))
	}
	if len(h.SecretIDs) > 0 {
		fmt.Fprintf(tw, "SECRETS\t%s\n", strings.Join(h.SecretIDs, ", "))
	}
	if h.Secret != "" {
		fmt.Fprintf(tw, "SECRET\t%s (shown this once: keep it now)\n", h.Secret)
	}
	return tw.Flush()
}

// webhookState is "enabled", "off" (set so) or "disabled" (for failing).
func webhookState(h *client.Webhook) string {
	switch {
	case !h.Enabled:
		return "off"
	case h.Disabled != nil:
		return "disabled"
	case h.FailingSince != nil:
		return "failing"
	}
	return "enabled"
}

func webhookQueues(qs []string) string {
	if len(qs) == 0 {
		return "all"
	}
	return strings.Join(qs, ", ")
}

// webhookDeliveriesCmd is deliveries, test and redeliver: each prints
// attempts.
func webhookDeliveriesCmd(api *Conn) []*cobra.Command {
	attempts := func(use, short, what string, act tenancy.Action, nargs int,
		call func(context.Context, *client.Client, []string) ([]client.WebhookDelivery, error)) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Args: exactArgs(nargs),
			RunE: func(cmd *cobra.Command, args []string) error {
				for i, kind := range []string{"webhook", "event"}[:nargs] {
					if err := CheckID(kind, args[i]); err != nil {
						return err
					}
				}
				return runAPI(cmd, api, what+" "+args[0], act,
					func(ctx context.Context, c *client.Client) ([]client.WebhookDelivery, error) {
						return call(ctx, c, args)
					},
					printWebhookDeliveries)
			}}
	}
	single := func(d *client.WebhookDelivery, err error) ([]client.WebhookDelivery, error) {
		if err != nil {
			return nil, err
		}
		return []client.WebhookDelivery{*d}, nil
	}
	return []*cobra.Command{
		attempts("deliveries <id>", "An endpoint's last 50 delivery attempts, newest first", "webhook", tenancy.ActWebhookRead, 1,
			func(ctx context.Context, c *client.Client, a []string) ([]client.WebhookDelivery, error) {
				ds, err := c.WebhookDeliveries(ctx, a[0])
				if ds == nil && err == nil {
					ds = []client.WebhookDelivery{}
				}
				return ds, err
			}),
		attempts("test <id>", "Send a dev.jobbie.test event to an endpoint now and show the attempt", "test webhook",
			tenancy.ActWebhookManage, 1,
			func(ctx context.Context, c *client.Client, a []string) ([]client.WebhookDelivery, error) {
				return single(c.TestWebhook(ctx, a[0]))
			}),
		attempts("redeliver <id> <event-id>", "Send one event of the log (s1:…) to an endpoint again now and show the attempt",
			"redeliver to webhook", tenancy.ActWebhookManage, 2,
			func(ctx context.Context, c *client.Client, a []string) ([]client.WebhookDelivery, error) {
				return single(c.RedeliverWebhook(ctx, a[0], a[1]))
			}),
	}
}

func printWebhookDeliveries(w io.Writer, ds []client.WebhookDelivery) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "AT\tEVENT\tTYPE\tATTEMPT\tSTATUS\tLATENCY\tOK\tERROR")
	for _, d := range ds {
		status := "-"
		if d.Status != 0 {
			status = strconv.Itoa(d.Status)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%t\t%s\n", stamp(&d.At), d.EventID, d.Type, d.Attempt, status,
			strconv.FormatFloat(d.LatencyMs, 'f', 1, 64)+"ms", d.OK, orDash(oneLine(d.Error, 120)))
	}
	return tw.Flush()
}

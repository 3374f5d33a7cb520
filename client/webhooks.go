package client

import (
	"context"
	"net/url"

	"github.com/jobbie/jobbie/wire"
)

// Lifecycle webhooks (docs/api/webhooks.md): a namespace's endpoints
// receive its jobs' events as signed CloudEvents. Every method needs a
// key whose role covers every queue of the namespace.

// WebhookRequest is an endpoint's whole settings, for a create and for
// an update (which replaces them). Enabled nil means enabled; Secret (a
// create only) asks for an endpoint secret, shown in the answer once.
type WebhookRequest = wire.WebhookRequest

// Webhook is one endpoint as read. Secret is set only in the answer of a
// create with Secret and of RotateWebhookSecret.
type Webhook = wire.Webhook

// WebhookDisabled says why and since when an endpoint's deliveries
// stopped (it failed for wire.WebhookDisableAfter); UpdateWebhook with
// Enabled nil or true enables it again.
type WebhookDisabled = wire.WebhookDisabled

// WebhookDelivery is one attempt in an endpoint's delivery log, or the
// answer of TestWebhook and RedeliverWebhook.
type WebhookDelivery = wire.WebhookDelivery

func webhookPath(id string) string { return "/api/v1/webhooks/" + url.PathEscape(id) }

// ListWebhooks lists the namespace's endpoints (webhook.read).
func (c *Client) ListWebhooks(ctx context.Context) ([]Webhook, error) {
	var out wire.WebhookList
	if _, err := c.do(ctx, "GET", "/api/v1/webhooks", nil, &out); err != nil {
		return nil, err
	}
	return out.Webhooks, nil
}

// CreateWebhook adds an endpoint (webhook.manage); a namespace has at
// most wire.MaxWebhooks.
func (c *Client) CreateWebhook(ctx context.Context, req WebhookRequest) (*Webhook, error) {
	return c.webhookCall(ctx, "POST", "/api/v1/webhooks", req)
}

// GetWebhook reads endpoint id, with why it is disabled if it is.
func (c *Client) GetWebhook(ctx context.Context, id string) (*Webhook, error) {
	return c.webhookCall(ctx, "GET", webhookPath(id), nil)
}

// UpdateWebhook replaces endpoint id's settings; Enabled nil or true
// enables an endpoint disabled for failing. Secret must be false: an
// endpoint's secret comes from its create or RotateWebhookSecret.
func (c *Client) UpdateWebhook(ctx context.Context, id string, req WebhookRequest) (*Webhook, error) {
	return c.webhookCall(ctx, "PUT", webhookPath(id), req)
}

// DeleteWebhook removes endpoint id; nothing more is delivered to it.
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	_, err := c.do(ctx, "DELETE", webhookPath(id), nil, nil)
	return err
}

// RotateWebhookSecret gives endpoint id a new "whsec_" secret, in the
// answer's Secret only; the older ones sign beside it for
// wire.WebhookSecretOverlap.
func (c *Client) RotateWebhookSecret(ctx context.Context, id string) (*Webhook, error) {
	return c.webhookCall(ctx, "POST", webhookPath(id)+"/rotate-secret", struct{}{})
}

// TestWebhook sends a dev.jobbie.test event to endpoint id now and
// answers the attempt (a failed attempt is an answer, not an error).
func (c *Client) TestWebhook(ctx context.Context, id string) (*WebhookDelivery, error) {
	var out WebhookDelivery
	if _, err := c.do(ctx, "POST", webhookPath(id)+"/test", struct{}{}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RedeliverWebhook sends event eventID of the namespace's event log
// ("s1:…", as WebhookDelivery.EventID and the event stream name it) to
// endpoint id again now, and answers the attempt.
func (c *Client) RedeliverWebhook(ctx context.Context, id, eventID string) (*WebhookDelivery, error) {
	var out WebhookDelivery
	in := wire.WebhookRedeliverRequest{EventID: eventID}
	if _, err := c.do(ctx, "POST", webhookPath(id)+"/redeliver", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// WebhookDeliveries is endpoint id's delivery log: its last
// wire.WebhookDeliveryLogSize attempts, newest first, replicated on the
// shard (kept across leader changes).
func (c *Client) WebhookDeliveries(ctx context.Context, id string) ([]WebhookDelivery, error) {
	var out wire.WebhookDeliveryList
	if _, err := c.do(ctx, "GET", webhookPath(id)+"/deliveries", nil, &out); err != nil {
		return nil, err
	}
	return out.Deliveries, nil
}

func (c *Client) webhookCall(ctx context.Context, method, path string, in any) (*Webhook, error) {
	var out Webhook
	if _, err := c.do(ctx, method, path, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

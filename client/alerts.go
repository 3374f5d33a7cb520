package client

import (
	"context"
	"net/url"

	"github.com/jobbie/jobbie/wire"
)

// Alert rules (docs/api/alerts.md): a namespace's conditions on its
// queues, evaluated by the shard leader, firing and resolving as the
// webhook events alert.firing and alert.resolved. Reading needs
// namespace.read, changing queue.manage, with a key whose role covers
// every queue of the namespace.

// AlertRuleRequest is a rule's whole settings, for a create (Name
// required) and for an update (which replaces them). Enabled nil means
// enabled; Queue "" watches every queue, each on its own.
type AlertRuleRequest = wire.AlertRuleRequest

// AlertRule is one rule as read, with the queues it fires on and the
// values of its last evaluation.
type AlertRule = wire.AlertRule

// Alert rule kinds (AlertRuleRequest.Kind).
const (
	AlertQueueDepth  = wire.AlertQueueDepth
	AlertOldest      = wire.AlertOldest
	AlertDead        = wire.AlertDead
	AlertFailureRate = wire.AlertFailureRate
	AlertNoWorker    = wire.AlertNoWorker
)

func alertPath(name string) string { return "/api/v1/alerts/" + url.PathEscape(name) }

// ListAlertRules lists the namespace's rules with their state.
func (c *Client) ListAlertRules(ctx context.Context) ([]AlertRule, error) {
	var out wire.AlertRuleList
	if _, err := c.do(ctx, "GET", "/api/v1/alerts", nil, &out); err != nil {
		return nil, err
	}
	if out.Alerts == nil {
		out.Alerts = []AlertRule{}
	}
	return out.Alerts, nil
}

// GetAlertRule reads rule name with its state.
func (c *Client) GetAlertRule(ctx context.Context, name string) (*AlertRule, error) {
	return c.alertCall(ctx, "GET", alertPath(name), nil)
}

// CreateAlertRule adds a rule (req.Name required); a namespace has at
// most wire.MaxAlertRules.
func (c *Client) CreateAlertRule(ctx context.Context, req AlertRuleRequest) (*AlertRule, error) {
	return c.alertCall(ctx, "POST", "/api/v1/alerts", req)
}

// UpdateAlertRule replaces rule name's settings (req.Name, if set, must
// be name).
func (c *Client) UpdateAlertRule(ctx context.Context, name string, req AlertRuleRequest) (*AlertRule, error) {
	return c.alertCall(ctx, "PUT", alertPath(name), req)
}

// DeleteAlertRule removes rule name; each queue it fires on resolves.
func (c *Client) DeleteAlertRule(ctx context.Context, name string) error {
	_, err := c.do(ctx, "DELETE", alertPath(name), nil, nil)
	return err
}

func (c *Client) alertCall(ctx context.Context, method, path string, in any) (*AlertRule, error) {
	var out AlertRule
	if _, err := c.do(ctx, method, path, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

package client

import (
	"context"
	"io"
	"net/url"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Usage, the tenant's plan and its invoices (wire/usage.go, plans.go,
// invoices.go). They need usage.read: owner, admin and billing keys; the
// plan and invoices cover the whole tenant, so a key narrowed to some
// namespaces is refused them (403).
type (
	Usage           = wire.Usage
	UsageMeters     = wire.UsageMeters
	UsageBucketView = wire.UsageBucketView
	NamespaceMeters = wire.NamespaceMeters
	Plan            = wire.Plan
	PlanLimits      = wire.PlanLimits
	TenantPlan      = wire.TenantPlan
	Invoice         = wire.Invoice
	InvoiceLine     = wire.InvoiceLine
	InvoiceSummary  = wire.InvoiceSummary
)

// Usage granularities (UsageQuery.Granularity).
const (
	GranularityHour = "hour"
	GranularityDay  = "day"
)

// UsageQuery narrows GET /api/v1/usage. Zero fields take the server's
// defaults: To now, From 24 hours (hour) or 30 days (day) before it,
// granularity hour, every namespace the key may read usage in.
type UsageQuery struct {
	From, To    time.Time
	Granularity string // GranularityHour or GranularityDay
	Namespace   string
}

func (q UsageQuery) encode() string {
	v := url.Values{}
	if !q.From.IsZero() {
		v.Set("from", q.From.UTC().Format(time.RFC3339))
	}
	if !q.To.IsZero() {
		v.Set("to", q.To.UTC().Format(time.RFC3339))
	}
	if q.Granularity != "" {
		v.Set("granularity", q.Granularity)
	}
	if q.Namespace != "" {
		v.Set("namespace", q.Namespace)
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// GetUsage returns the tenant's usage per namespace and per bucket (hour
// or day), the tenant's buckets and the totals.
func (c *Client) GetUsage(ctx context.Context, q UsageQuery) (*Usage, error) {
	var out Usage
	if _, err := c.do(ctx, "GET", "/api/v1/usage"+q.encode(), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetPlan returns the tenant's plan in effect and, when a change is
// pending, the next one and when it takes effect.
func (c *Client) GetPlan(ctx context.Context) (*TenantPlan, error) {
	var out TenantPlan
	if _, err := c.do(ctx, "GET", "/api/v1/plan", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListInvoices lists every month's invoice of the tenant, the running
// month's first.
func (c *Client) ListInvoices(ctx context.Context) ([]InvoiceSummary, error) {
	var out wire.InvoiceList
	if _, err := c.do(ctx, "GET", "/api/v1/invoices", nil, &out); err != nil {
		return nil, err
	}
	return out.Invoices, nil
}

func invoicePath(id string) string { return "/api/v1/invoices/" + url.PathEscape(id) }

// GetInvoice returns invoice id ("inv_<tenant id>_<YYYY-MM>"). Another
// tenant's is not found.
func (c *Client) GetInvoice(ctx context.Context, id string) (*Invoice, error) {
	var out Invoice
	if _, err := c.do(ctx, "GET", invoicePath(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpcomingInvoice returns the running month's invoice so far.
func (c *Client) UpcomingInvoice(ctx context.Context) (*Invoice, error) {
	return c.GetInvoice(ctx, "upcoming")
}

// InvoiceCSV writes invoice id as CSV (a header, wire.InvoiceCSVHeader,
// then a row per line) to w and returns the bytes written.
func (c *Client) InvoiceCSV(ctx context.Context, id string, w io.Writer) (int64, error) {
	return c.download(ctx, invoicePath(id)+"/csv", "text/csv", w)
}

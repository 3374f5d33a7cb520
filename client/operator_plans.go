package client

import (
	"context"
	"encoding/json"
	"net/url"

	"github.com/jobbie/jobbie/wire"
)

// The operator's plans and tenants' plans and invoices, on the control
// plane (operator only). A tenant reads its own plan and invoices through
// the gateway: GetPlan, ListInvoices.

// PlanView is a plan's latest version and the hour it took effect.
type PlanView = wire.PlanView

func planPath(name string) string { return "/control/v1/plans/" + url.PathEscape(name) }

func tenantPath(tenantID string) string { return "/control/v1/tenants/" + url.PathEscape(tenantID) }

// ListPlans lists every plan's latest version.
func (c *Client) ListPlans(ctx context.Context) ([]PlanView, error) {
	var out struct {
		Plans []PlanView `json:"plans"`
	}
	if _, err := c.do(ctx, "GET", "/control/v1/plans", nil, &out); err != nil {
		return nil, err
	}
	return out.Plans, nil
}

// GetPlanByName is the latest version of the plan named name.
func (c *Client) GetPlanByName(ctx context.Context, name string) (*PlanView, error) {
	var out PlanView
	if _, err := c.do(ctx, "GET", planPath(name), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PutPlan creates plan p, or replaces the plan of its name with a new
// version. Either takes effect from the start of the next UTC hour.
func (c *Client) PutPlan(ctx context.Context, p Plan) (*PlanView, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return c.PutPlanJSON(ctx, p.Name, raw)
}

// PutPlanJSON is PutPlan with the plan named name as JSON, sent as it is:
// the control plane judges every field, and one it does not know is a 400
// naming it rather than dropped.
func (c *Client) PutPlanJSON(ctx context.Context, name string, plan json.RawMessage) (*PlanView, error) {
	var out PlanView
	// Replace it where it exists; create it on the control plane's 404.
	_, err := c.do(ctx, "PUT", planPath(name), plan, &out)
	if IsNotFound(err) {
		_, err = c.do(ctx, "POST", "/control/v1/plans", plan, &out)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// GetTenantPlan is tenant tenantID's plan, and the one it moves to at the
// next UTC hour, if any.
func (c *Client) GetTenantPlan(ctx context.Context, tenantID string) (*TenantPlan, error) {
	var out TenantPlan
	if _, err := c.do(ctx, "GET", tenantPath(tenantID)+"/plan", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetTenantPlan moves tenant tenantID to plan from the start of the next
// UTC hour.
func (c *Client) SetTenantPlan(ctx context.Context, tenantID, plan string) (*TenantPlan, error) {
	var out TenantPlan
	if _, err := c.do(ctx, "PUT", tenantPath(tenantID)+"/plan", wire.SetPlanRequest{Plan: plan}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListTenantInvoices lists tenant tenantID's invoices, the running month
// first.
func (c *Client) ListTenantInvoices(ctx context.Context, tenantID string) ([]InvoiceSummary, error) {
	var out wire.InvoiceList
	if _, err := c.do(ctx, "GET", tenantPath(tenantID)+"/invoices", nil, &out); err != nil {
		return nil, err
	}
	return out.Invoices, nil
}

// GetTenantInvoice is invoice id of tenant tenantID.
func (c *Client) GetTenantInvoice(ctx context.Context, tenantID, id string) (*Invoice, error) {
	return c.tenantInvoice(ctx, tenantPath(tenantID)+"/invoices/"+url.PathEscape(id))
}

// UpcomingTenantInvoice is tenant tenantID's running month so far.
func (c *Client) UpcomingTenantInvoice(ctx context.Context, tenantID string) (*Invoice, error) {
	return c.tenantInvoice(ctx, tenantPath(tenantID)+"/invoices/upcoming")
}

func (c *Client) tenantInvoice(ctx context.Context, path string) (*Invoice, error) {
	var out Invoice
	if _, err := c.do(ctx, "GET", path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

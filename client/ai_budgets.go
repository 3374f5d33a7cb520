package client

import (
	"context"
	"net/url"

	"github.com/jobbie/jobbie/wire"
)

// AI budgets (docs/api/ai.md#budgets): daily limits on the usage a
// namespace, a queue or a tag reported, and the jobs they hold.
type (
	BudgetSpec      = wire.BudgetSpec
	Budget          = wire.Budget
	ApproveResponse = wire.ApproveResponse
)

// ListBudgets lists the namespace's budgets, with what their scope
// reported today.
func (c *Client) ListBudgets(ctx context.Context) ([]Budget, error) {
	var out wire.BudgetList
	if _, err := c.do(ctx, "GET", "/api/v1/ai/budgets", nil, &out); err != nil {
		return nil, err
	}
	return out.Budgets, nil
}

// CreateBudget creates a budget (spec.Name names it).
func (c *Client) CreateBudget(ctx context.Context, spec BudgetSpec) (*Budget, error) {
	var out Budget
	if _, err := c.do(ctx, "POST", "/api/v1/ai/budgets", spec, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetBudget reads one budget.
func (c *Client) GetBudget(ctx context.Context, name string) (*Budget, error) {
	var out Budget
	if _, err := c.do(ctx, "GET", "/api/v1/ai/budgets/"+url.PathEscape(name), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateBudget replaces a budget's settings.
func (c *Client) UpdateBudget(ctx context.Context, name string, spec BudgetSpec) (*Budget, error) {
	var out Budget
	if _, err := c.do(ctx, "PUT", "/api/v1/ai/budgets/"+url.PathEscape(name), spec, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteBudget deletes a budget; the jobs it holds stay held.
func (c *Client) DeleteBudget(ctx context.Context, name string) error {
	_, err := c.do(ctx, "DELETE", "/api/v1/ai/budgets/"+url.PathEscape(name), nil, nil)
	return err
}

// ApproveJob runs a job a budget held, outside the budget.
func (c *Client) ApproveJob(ctx context.Context, id string) (*ApproveResponse, error) {
	var out ApproveResponse
	if _, err := c.do(ctx, "POST", "/api/v1/jobs/"+url.PathEscape(id)+"/approve", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RejectJob cancels a job a budget held.
func (c *Client) RejectJob(ctx context.Context, id string) (*ApproveResponse, error) {
	var out ApproveResponse
	if _, err := c.do(ctx, "POST", "/api/v1/jobs/"+url.PathEscape(id)+"/reject", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

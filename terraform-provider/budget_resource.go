package provider

import (
	"context"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// jobbie_budget: one of a namespace's AI budgets (docs/api/ai.md). What
// its scope spent today is the service's, not configuration: the
// resource holds the settings alone.

var (
	_ resource.ResourceWithConfigure   = (*budgetResource)(nil)
	_ resource.ResourceWithImportState = (*budgetResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*budgetResource)(nil)
)

func newBudgetResource() resource.Resource {
	return &budgetResource{namedInNamespace[budgetModel, *wire.Budget]{
		noun: "budget", fields: []string{"name", "scope", "queue", "tag", "daily_cost_usd", "daily_tokens", "per_job_cost_usd",
			"per_job_tokens", "on_exceed"},
		validName: budgetNameRE.MatchString, nameWhat: "a budget's name",
		write: func(ctx context.Context, c *client.Client, name string, m *budgetModel, create bool) (*wire.Budget, error) {
			if create {
				return c.CreateBudget(ctx, m.spec(true))
			}
			return c.UpdateBudget(ctx, name, m.spec(false))
		},
		get: func(ctx context.Context, c *client.Client, name string) (*wire.Budget, error) {
			return c.GetBudget(ctx, name)
		},
		del: func(ctx context.Context, c *client.Client, name string) error { return c.DeleteBudget(ctx, name) },
		set: (*budgetModel).set,
	}}
}

type budgetResource struct {
	namedInNamespace[budgetModel, *wire.Budget]
}

type budgetModel struct {
	ID           types.String `tfsdk:"id"`
	Namespace    types.String `tfsdk:"namespace"`
	Name         types.String `tfsdk:"name"`
	Scope        types.String `tfsdk:"scope"`
	Queue        types.String `tfsdk:"queue"`
	Tag          types.String `tfsdk:"tag"`
	DailyCostUSD types.String `tfsdk:"daily_cost_usd"`
	DailyTokens  types.Int64  `tfsdk:"daily_tokens"`
	PerJobCost   types.String `tfsdk:"per_job_cost_usd"`
	PerJobTokens types.Int64  `tfsdk:"per_job_tokens"`
	OnExceed     types.String `tfsdk:"on_exceed"`
}

var budgetNameRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func (r *budgetResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_budget"
}

func (r *budgetResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "An AI budget: a daily (UTC) limit on the model cost or tokens that workers reported for a " +
			"namespace, a queue or a tag. Once what its scope reported today reaches a limit, a job enqueued into the " +
			"scope is refused (`reject`: 429 `budget_exceeded`), held until approved (`hold`), or enqueued with a " +
			"`budget.exceeded` webhook event once a day (`alert`). Per-job limits bound what one job reports over its " +
			"attempts (docs/api/ai.md: past one, `reject` ends the job, `hold` holds its next attempt, `alert` logs an event). " +
			"Every setting but `name` and `namespace` changes in place.",
		Attributes: map[string]schema.Attribute{
			"id":        computedKept("`<namespace>/<name>`; also the import id."),
			"namespace": namespaceAttribute("budget"),
			"name": schema.StringAttribute{
				MarkdownDescription: "The budget's name, unique in its namespace: 1-64 letters, digits, `.`, `_` or `-`. " +
					"Changing it replaces the budget.",
				Required:      true,
				Validators:    []validator.String{stringvalidator.RegexMatches(budgetNameRE, "must be 1-64 letters, digits, '.', '_' or '-'")},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"scope": schema.StringAttribute{
				MarkdownDescription: "`namespace` (every job of the namespace), `queue` (with `queue`) or `tag` (with `tag`).",
				Required:            true,
				Validators:          []validator.String{stringvalidator.OneOf(wire.BudgetScopeNamespace, wire.BudgetScopeQueue, wire.BudgetScopeTag)},
			},
			"queue": schema.StringAttribute{
				MarkdownDescription: "The queue of a `queue` budget; `\"\"` (the default) otherwise.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(""),
				Validators:          []validator.String{stringvalidator.Any(stringvalidator.LengthAtMost(0), queueName())},
			},
			"tag": schema.StringAttribute{
				MarkdownDescription: "The tag of a `tag` budget, as `key=value`; `\"\"` (the default) otherwise.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(""),
			},
			"daily_cost_usd": schema.StringAttribute{
				MarkdownDescription: "The daily limit on reported cost, a decimal string of dollars (`\"25\"`, `\"0.50\"`); " +
					"the state keeps the configuration's spelling. At least one of `daily_cost_usd`, `daily_tokens`, " +
					"`per_job_cost_usd` and `per_job_tokens`.",
				Optional:   true,
				Validators: []validator.String{stringCheck{"cost", func(s string) error { _, err := wire.ParseCostUSD(s); return err }}},
			},
			"daily_tokens": schema.Int64Attribute{
				MarkdownDescription: "The daily limit on reported tokens of every kind; 0 (the default): none.",
				Optional:            true,
				Computed:            true,
				Default:             int64default.StaticInt64(0),
				Validators:          []validator.Int64{int64validator.AtLeast(0)},
			},
			"per_job_cost_usd": schema.StringAttribute{
				MarkdownDescription: "The limit on what one job of the scope reports over all its attempts, a decimal " +
					"string of dollars; the state keeps the configuration's spelling.",
				Optional:   true,
				Validators: []validator.String{stringCheck{"cost", func(s string) error { _, err := wire.ParseCostUSD(s); return err }}},
			},
			"per_job_tokens": schema.Int64Attribute{
				MarkdownDescription: "The limit on the tokens of every kind one job of the scope reports over all its " +
					"attempts; 0 (the default): none.",
				Optional:   true,
				Computed:   true,
				Default:    int64default.StaticInt64(0),
				Validators: []validator.Int64{int64validator.AtLeast(0)},
			},
			"on_exceed": schema.StringAttribute{
				MarkdownDescription: "`hold`, `reject` or `alert`.",
				Required:            true,
				Validators:          []validator.String{stringvalidator.OneOf(wire.BudgetHold, wire.BudgetReject, wire.BudgetAlert)},
			},
		},
	}
}

func (m *budgetModel) spec(create bool) wire.BudgetSpec {
	s := wire.BudgetSpec{Scope: m.Scope.ValueString(), Queue: m.Queue.ValueString(), Tag: m.Tag.ValueString(),
		DailyCostUSD: m.DailyCostUSD.ValueString(), DailyTokens: m.DailyTokens.ValueInt64(),
		PerJobCostUSD: m.PerJobCost.ValueString(), PerJobTokens: m.PerJobTokens.ValueInt64(), OnExceed: m.OnExceed.ValueString()}
	if create {
		s.Name = m.Name.ValueString()
	}
	return s
}

// set reads a budget as the API holds it into m; the cost keeps the
// configuration's spelling when it is the same amount.
func (m *budgetModel) set(ns string, b *wire.Budget) {
	m.ID = types.StringValue(ns + "/" + b.Name)
	m.Namespace, m.Name, m.Scope = types.StringValue(ns), types.StringValue(b.Name), types.StringValue(b.Scope)
	m.Queue, m.Tag, m.OnExceed = types.StringValue(b.Queue), types.StringValue(b.Tag), types.StringValue(b.OnExceed)
	m.DailyTokens, m.PerJobTokens = types.Int64Value(b.DailyTokens), types.Int64Value(b.PerJobTokens)
	m.DailyCostUSD = keptCost(m.DailyCostUSD, b.DailyCostUSD)
	m.PerJobCost = keptCost(m.PerJobCost, b.PerJobCostUSD)
}

// keptCost is the API's cost, in the configuration's spelling (had)
// when it is the same amount; null when the API has none.
func keptCost(had types.String, api string) types.String {
	have, err := wire.ParseCostUSD(had.ValueString())
	want, _ := wire.ParseCostUSD(api)
	switch {
	case api == "":
		return types.StringNull()
	case had.IsNull() || err != nil || have != want:
		return types.StringValue(api)
	}
	return had
}

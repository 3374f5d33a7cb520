package provider

import (
	"context"
	"errors"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// The plumbing the resources and data sources share, in one place each:
// taking the provider's data, reading a model, the calls of Read and
// Delete and what a 404 means to them, and the import ids.

// resourceBase is embedded by every resource: Configure takes the
// provider's data.
type resourceBase struct{ p *providerData }

func (b *resourceBase) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	b.p = configure(req.ProviderData, &resp.Diagnostics)
}

// namespacedBase is resourceBase for a resource with a namespace
// attribute (namespaceAttribute): ModifyPlan plans the provider's
// namespace where the configuration names none.
type namespacedBase struct{ resourceBase }

func (b *namespacedBase) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	planDefaultNamespace(ctx, b.p, req, resp)
}

// dataSourceBase is embedded by every data source: Configure takes the
// provider's data.
type dataSourceBase struct{ p *providerData }

func (b *dataSourceBase) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	b.p = configure(req.ProviderData, &resp.Diagnostics)
}

// namespace is the namespace a data source reads: its own namespace
// attribute when set, else the provider's.
func (b *dataSourceBase) namespace(v types.String) string {
	if ns := v.ValueString(); ns != "" {
		return ns
	}
	return b.p.namespace
}

// source is what a model is read from: a plan, a state or a
// configuration.
type source interface {
	Get(ctx context.Context, target any) diag.Diagnostics
}

// load reads src into a new M; false when it could not (diags says why).
func load[M any](ctx context.Context, src source, diags *diag.Diagnostics) (*M, bool) {
	m := new(M)
	diags.Append(src.Get(ctx, m)...)
	return m, !diags.HasError()
}

// createFromPlan is Create's plumbing: the plan, written by put (which
// reads the API's answer into it), saved as the state unless put
// reported an error.
func createFromPlan[M any](ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse, put func(plan *M)) {
	plan, ok := load[M](ctx, req.Plan, &resp.Diagnostics)
	if !ok {
		return
	}
	if put(plan); !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	}
}

// updateFromPlan is createFromPlan for Update; put gets the prior state
// too.
func updateFromPlan[M any](ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse, put func(plan, state *M)) {
	plan, ok := load[M](ctx, req.Plan, &resp.Diagnostics)
	state, ok2 := load[M](ctx, req.State, &resp.Diagnostics)
	if !ok || !ok2 {
		return
	}
	if put(plan, state); !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
	}
}

// errNone is what a get answers for a setting the API holds as empty
// rather than with a 404: there is none, as after a 404.
var errNone = errors.New("none")

// readCall is a read, retried while the service asks to. Nothing there
// (a 404, or errNone) calls notFound when there is one: a resource's Read
// removes the resource, a data source says what it did not find. Any
// other failure is reported as summary. False when there is nothing to
// use.
func readCall[T any](ctx context.Context, diags *diag.Diagnostics, summary string, notFound func(), get func() (T, error)) (T, bool) {
	v, err := retry(ctx, false, get)
	switch {
	case err == nil:
		return v, true
	case notFound != nil && (client.IsNotFound(err) || errors.Is(err, errNone)):
		notFound()
	default:
		apiError(diags, summary, err)
	}
	return v, false
}

// refresh is readCall for a resource's Read: what the API no longer has
// (deleted outside Terraform) is removed from the state, and planned for
// creation again.
func refresh[T any](ctx context.Context, resp *resource.ReadResponse, summary string, get func() (T, error)) (T, bool) {
	return readCall(ctx, &resp.Diagnostics, summary, func() { resp.State.RemoveResource(ctx) }, get)
}

// deleteCall is a Delete's call, retried while the service says it did
// nothing; gone already (a 404) is no error.
func deleteCall(ctx context.Context, diags *diag.Diagnostics, summary string, del func() error) {
	if err := retryErr(ctx, true, del); err != nil && !client.IsNotFound(err) {
		apiError(diags, summary, err)
	}
}

// importNamespace is ImportState of a namespace's setting: the import id
// is the namespace's name, and so is the id.
func importNamespace(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if err := tenancy.ValidateNamespace(req.ID); err != nil {
		resp.Diagnostics.AddError("Invalid import id", "Expected a namespace name: "+err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), req.ID)...)
}

// importNamed is ImportState of a resource named in a namespace: the
// import id, want ("<namespace>/<name>"), is also the id. valid, when
// set, checks the name (one with a '/' never is): a name it refuses is
// refused as not nameWhat ("a rule's name"). False when the id is
// refused.
func importNamed(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse, want string,
	valid func(name string) bool, nameWhat string) bool {
	ns, name, ok := splitImportID(req.ID, &resp.Diagnostics, want)
	if !ok {
		return false
	}
	if valid != nil && (!valid(name) || strings.Contains(name, "/")) {
		resp.Diagnostics.AddError("Invalid import id", "Expected "+want+" with "+nameWhat+": "+req.ID)
		return false
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("namespace"), ns)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	return true
}

// attributes is a plan or a state, read an attribute at a time.
type attributes interface {
	GetAttribute(ctx context.Context, p path.Path, target any) diag.Diagnostics
}

// nameIn is the namespace and name attributes of at.
func nameIn(ctx context.Context, at attributes, diags *diag.Diagnostics) (ns, name string, ok bool) {
	diags.Append(at.GetAttribute(ctx, path.Root("namespace"), &ns)...)
	diags.Append(at.GetAttribute(ctx, path.Root("name"), &name)...)
	return ns, name, !diags.HasError()
}

// namespaceIn is the namespace attribute of at.
func namespaceIn(ctx context.Context, at attributes, diags *diag.Diagnostics) (string, bool) {
	var ns string
	diags.Append(at.GetAttribute(ctx, path.Root("namespace"), &ns)...)
	return ns, !diags.HasError()
}

package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/jobbie/jobbie/client"
)

// namespaceSetting is the life cycle of a resource that is one setting of
// a namespace, which the namespace's shard or the control plane keeps
// whole: a GET reads it, a PUT sets all of it (so Create and Update are
// the same write, and a setting the namespace has already is taken over),
// and Delete removes it or turns it off (a DELETE, or a PUT). Its id is
// the namespace's name, also the import id. A resource embeds it, filled
// in by its constructor, and adds Metadata and Schema. M is the
// resource's model, T what the API answers.
type namespaceSetting[M, T any] struct {
	namespacedBase
	// noun names the setting in error summaries ("the OTLP endpoint"),
	// removal is the verb of a failed Delete's ("remove").
	noun, removal string
	// write sets the setting plan describes and reads the answer into
	// plan; verb is "set" on Create and "update" on Update.
	write func(ctx context.Context, plan *M, config tfsdk.Config, diags *diag.Diagnostics, verb string)
	// get reads the setting of namespace ns (errNone: it has none).
	get func(ctx context.Context, c *client.Client, ns string) (T, error)
	// set reads what get answers into m.
	set func(m *M, held T, ns string, diags *diag.Diagnostics)
	// del removes the setting of namespace ns.
	del func(ctx context.Context, c *client.Client, ns string) error
}

func (s *namespaceSetting[M, T]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	createFromPlan(ctx, req, resp, func(plan *M) { s.write(ctx, plan, req.Config, &resp.Diagnostics, "set") })
}

func (s *namespaceSetting[M, T]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	updateFromPlan(ctx, req, resp, func(plan, _ *M) { s.write(ctx, plan, req.Config, &resp.Diagnostics, "update") })
}

// Read takes the setting as the API holds it; none (removed outside
// Terraform, or the namespace gone, and the setting with it) removes the
// resource from the state.
func (s *namespaceSetting[M, T]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := load[M](ctx, req.State, &resp.Diagnostics)
	ns, ok2 := namespaceIn(ctx, req.State, &resp.Diagnostics)
	if !ok || !ok2 {
		return
	}
	held, ok := refresh(ctx, resp, "Could not read "+s.noun+" of namespace "+ns, func() (T, error) { return s.get(ctx, s.p.in(ns), ns) })
	if !ok {
		return
	}
	if s.set(state, held, ns, &resp.Diagnostics); !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
	}
}

func (s *namespaceSetting[M, T]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	ns, ok := namespaceIn(ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	deleteCall(ctx, &resp.Diagnostics, "Could not "+s.removal+" "+s.noun+" of namespace "+ns,
		func() error { return s.del(ctx, s.p.in(ns), ns) })
}

// ImportState takes the namespace's name.
func (s *namespaceSetting[M, T]) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importNamespace(ctx, req, resp)
}

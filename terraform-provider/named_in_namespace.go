package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/jobbie/jobbie/client"
)

// namedInNamespace is the life cycle of a resource the API keeps in a
// namespace under the name its configuration gives: a POST that names it
// creates it, a PUT replaces its settings, and it is read and deleted by
// name. Its id and import id are "<namespace>/<name>"; changing the name
// replaces it. A resource embeds it, filled in by its constructor, and
// adds Metadata and Schema. M is the resource's model, T what the API
// answers.
type namedInNamespace[M, T any] struct {
	namespacedBase
	// noun names the kind in error summaries ("alert rule"); fields are
	// the attributes a refused write may name.
	noun   string
	fields []string
	// validName checks an imported name, which must be nameWhat ("a
	// rule's name").
	validName func(name string) bool
	nameWhat  string
	// write creates (create) or replaces the one plan describes.
	write func(ctx context.Context, c *client.Client, name string, plan *M, create bool) (T, error)
	get   func(ctx context.Context, c *client.Client, name string) (T, error)
	del   func(ctx context.Context, c *client.Client, name string) error
	// set reads what the API answers into m.
	set func(m *M, ns string, held T)
}

func (o *namedInNamespace[M, T]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	createFromPlan(ctx, req, resp, func(plan *M) { o.put(ctx, req.Plan, plan, &resp.Diagnostics, true) })
}

func (o *namedInNamespace[M, T]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	updateFromPlan(ctx, req, resp, func(plan, _ *M) { o.put(ctx, req.Plan, plan, &resp.Diagnostics, false) })
}

// put writes plan, whose namespace and name it reads from at (the
// request's plan), and reads the answer into it.
func (o *namedInNamespace[M, T]) put(ctx context.Context, at attributes, plan *M, diags *diag.Diagnostics, create bool) {
	ns, name, ok := nameIn(ctx, at, diags)
	if !ok {
		return
	}
	what := "update"
	if create {
		what = "create"
	}
	held, err := retry(ctx, true, func() (T, error) { return o.write(ctx, o.p.in(ns), name, plan, create) })
	if err != nil {
		apiErrorAt(diags, "Could not "+what+" "+o.noun+" "+name+" in namespace "+ns, err, o.fields...)
		return
	}
	o.set(plan, ns, held)
}

func (o *namedInNamespace[M, T]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := load[M](ctx, req.State, &resp.Diagnostics)
	ns, name, ok2 := nameIn(ctx, req.State, &resp.Diagnostics)
	if !ok || !ok2 {
		return
	}
	held, ok := refresh(ctx, resp, "Could not read "+o.noun+" "+name+" in namespace "+ns,
		func() (T, error) { return o.get(ctx, o.p.in(ns), name) })
	if ok {
		o.set(state, ns, held)
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
	}
}

func (o *namedInNamespace[M, T]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	ns, name, ok := nameIn(ctx, req.State, &resp.Diagnostics)
	if ok {
		deleteCall(ctx, &resp.Diagnostics, "Could not delete "+o.noun+" "+name+" in namespace "+ns,
			func() error { return o.del(ctx, o.p.in(ns), name) })
	}
}

// ImportState takes "<namespace>/<name>".
func (o *namedInNamespace[M, T]) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importNamed(ctx, req, resp, "<namespace>/<name>", o.validName, o.nameWhat)
}

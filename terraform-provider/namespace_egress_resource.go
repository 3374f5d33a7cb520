package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
)

// A namespace's egress allow-list is a resource of its own, not an
// attribute of jobbie_namespace: the namespace's shard keeps it, not the
// namespace's record the namespace resource reads, and a namespace on a
// self-hosted shard no node has joined yet cannot hold one.

var (
	_ resource.ResourceWithConfigure   = (*namespaceEgressResource)(nil)
	_ resource.ResourceWithImportState = (*namespaceEgressResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*namespaceEgressResource)(nil)
)

// maxEgressAllow is the API's limit on a list's entries
// (outbound.MaxAllowList, which the provider may not import).
const maxEgressAllow = 64

func newNamespaceEgressResource() resource.Resource {
	r := &namespaceEgressResource{}
	r.namespaceSetting = namespaceSetting[namespaceEgressModel, []string]{
		noun: "the egress allow-list", removal: "remove", write: r.put, set: (*namespaceEgressModel).set,
		get: func(ctx context.Context, c *client.Client, ns string) ([]string, error) {
			return c.GetNamespaceEgress(ctx, ns)
		},
		// Removing the list is setting none: any public host again.
		del: func(ctx context.Context, c *client.Client, ns string) error {
			_, err := c.PutNamespaceEgress(ctx, ns, nil)
			return err
		},
	}
	return r
}

type namespaceEgressResource struct {
	namespaceSetting[namespaceEgressModel, []string]
}

type namespaceEgressModel struct {
	ID          types.String `tfsdk:"id"`
	Namespace   types.String `tfsdk:"namespace"`
	EgressAllow types.Set    `tfsdk:"egress_allow"`
}

func (r *namespaceEgressResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_namespace_egress"
}

func (r *namespaceEgressResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A namespace's egress allow-list: the hosts its push queues and webhooks may call. With none, " +
			"any public host may be called (the API's address rules hold either way: the list only narrows them).\n\n" +
			"`PUT /api/v1/namespaces/{name}/egress` sets the whole list, so `egress_allow` changes in place; a list the " +
			"namespace already has is taken over. Destroying the resource removes the list (any public host again). A " +
			"namespace on a self-hosted shard no node has joined yet cannot hold a list (the API answers 409).",
		Attributes: map[string]schema.Attribute{
			"id":        computedKept("The namespace's name; also the import id."),
			"namespace": namespaceAttribute("egress allow-list"),
			"egress_allow": schema.SetAttribute{
				MarkdownDescription: "At most 64 entries, each a host name (`hooks.example.com`, matched exactly, case and a " +
					"trailing dot aside), a `*.domain` pattern (any subdomain of `domain` at any depth, not `domain` itself) or an " +
					"IP address. An empty set is no list: any public host. Push queues and webhooks whose URL's host is off the " +
					"list are refused when configured, and their deliveries fail once the list changes.",
				Required:    true,
				ElementType: types.StringType,
				Validators:  []validator.Set{setvalidator.SizeAtMost(maxEgressAllow)},
			},
		},
	}
}

func (m *namespaceEgressModel) set(allow []string, ns string, diags *diag.Diagnostics) {
	m.ID = types.StringValue(ns)
	m.Namespace = types.StringValue(ns)
	v, d := types.SetValueFrom(context.Background(), types.StringType, allow)
	diags.Append(d...)
	m.EgressAllow = v
}

// put sets the list the plan describes and reads the answer into plan.
func (r *namespaceEgressResource) put(ctx context.Context, plan *namespaceEgressModel, _ tfsdk.Config, diags *diag.Diagnostics, what string) {
	ns := plan.Namespace.ValueString()
	allow := []string{}
	if diags.Append(plan.EgressAllow.ElementsAs(ctx, &allow, false)...); diags.HasError() {
		return
	}
	held, err := retry(ctx, true, func() ([]string, error) { return r.p.in(ns).PutNamespaceEgress(ctx, ns, allow) })
	if err != nil {
		summary := "Could not " + what + " the egress allow-list of namespace " + ns
		// The API names an entry by its place in what was sent
		// (egress_allow[1]); its message quotes the entry, which is what
		// a set's reader can find.
		if e, ok := client.AsError(err); ok && strings.HasPrefix(e.Field, "egress_allow") {
			diags.AddAttributeError(path.Root("egress_allow"), summary, apiDetail(err))
			return
		}
		apiError(diags, summary, err)
		return
	}
	plan.set(held, ns, diags)
}

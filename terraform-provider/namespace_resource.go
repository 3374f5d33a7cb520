package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
)

var (
	_ resource.ResourceWithConfigure   = (*namespaceResource)(nil)
	_ resource.ResourceWithImportState = (*namespaceResource)(nil)
)

func newNamespaceResource() resource.Resource { return &namespaceResource{} }

type namespaceResource struct{ resourceBase }

type namespaceModel struct {
	ID                 types.String   `tfsdk:"id"`
	Name               types.String   `tfsdk:"name"`
	Description        types.String   `tfsdk:"description"`
	Retention          durationString `tfsdk:"retention"`
	DeletionProtection types.Bool     `tfsdk:"deletion_protection"`
	ForceDestroy       types.Bool     `tfsdk:"force_destroy"`
	CreatedAt          types.String   `tfsdk:"created_at"`
	Shard              types.String   `tfsdk:"shard"`
}

func (r *namespaceResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_namespace"
}

func (r *namespaceResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A namespace of the provider key's tenant: its own queues, jobs and schedules, placed on a shard " +
			"cluster by Jobbie. The provider's API key must be allowed the namespace (a key for every namespace, `[\"*\"]`, " +
			"such as the tenant's owner key, is).\n\n" +
			"Destroying a namespace that holds jobs, queues or schedules fails unless `force_destroy` is true, which " +
			"deletes them with it; `deletion_protection` refuses destroy either way.",
		Attributes: map[string]schema.Attribute{
			"id": computedKept("The namespace's name; also the import id."),
			"name": schema.StringAttribute{
				MarkdownDescription: "Name: 1-63 lowercase letters, digits or `-`, starting with a letter or digit. Changing it replaces the namespace.",
				Required:            true,
				Validators:          []validator.String{namespaceName()},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"description": descriptionAttribute("Free text, at most 1024 bytes."),
			"retention": schema.StringAttribute{
				MarkdownDescription: "The namespace's default retention for finished jobs, a duration from `1m` to `87600h` (ten years). " +
					"Completed and cancelled jobs are kept this long unless their queue's defaults set a `retention`; left out, the shard's " +
					"default (7 days) applies. It takes effect for jobs that finish after it is set.",
				Optional:      true,
				CustomType:    durationType{},
				Validators:    []validator.String{duration(minRetention, maxRetention)},
				PlanModifiers: []planmodifier.String{sameDuration},
			},
			"shard": schema.StringAttribute{
				MarkdownDescription: "One of the tenant's self-hosted shards (its id, like a `jobbie_shard_join_token`'s `shard_id`) " +
					"to place the namespace on when it is created. Left out, Jobbie places it on a hosted shard. Changing it " +
					"replaces the namespace (a new, empty one on the other shard; `force_destroy` applies to the old one).\n\n" +
					"It is read back (the API names the tenant's own shards, never a hosted one), so a namespace moved off " +
					"it, or imported into a configuration that names another shard, is planned for replacement. A namespace " +
					"may be placed on a shard no node has joined yet (apply warns); it serves once a node joins. A " +
					"`retention` needs a joined node: the API refuses it before creating anything.",
				Optional:      true,
				Validators:    []validator.String{shardID()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"deletion_protection": schema.BoolAttribute{
				MarkdownDescription: "While true, the API refuses to delete the namespace, and so does `terraform destroy`. Defaults to `false`.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
			},
			"force_destroy": schema.BoolAttribute{
				MarkdownDescription: "Whether destroying the namespace also deletes the jobs, queues and schedules it holds. " +
					"Defaults to `false`: destroying a namespace that holds any fails. Only Terraform knows it (it is not sent " +
					"to the API); apply it before the destroy that needs it.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
			},
			"created_at": computedKept("When the namespace was created (RFC 3339)."),
		},
	}
}

func (m *namespaceModel) set(ns *client.Namespace) {
	m.ID = types.StringValue(ns.Name)
	m.Name = types.StringValue(ns.Name)
	m.Description = types.StringValue(ns.Description)
	m.Retention = durationValue(ns.Retention)
	m.DeletionProtection = types.BoolValue(ns.DeletionProtection)
	m.CreatedAt = timeValue(&ns.CreatedAt)
	m.Shard = types.StringNull()
	if ns.Shard != "" {
		m.Shard = types.StringValue(ns.Shard)
	}
	if m.ForceDestroy.IsNull() || m.ForceDestroy.IsUnknown() {
		m.ForceDestroy = types.BoolValue(false)
	}
}

func (r *namespaceResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	createFromPlan(ctx, req, resp, func(plan *namespaceModel) {
		body := client.CreateNamespaceRequest{Name: plan.Name.ValueString(), Description: plan.Description.ValueString(),
			Retention: goDuration(plan.Retention), DeletionProtection: plan.DeletionProtection.ValueBool()}
		shard := plan.Shard.ValueString()
		ns, err := retry(ctx, true, func() (*client.Namespace, error) {
			if shard != "" {
				return r.p.client.CreateNamespaceOnWith(ctx, body, shard)
			}
			return r.p.client.CreateNamespaceWith(ctx, body)
		})
		if err != nil {
			switch { // the first that explains it
			case shard != "" && createOnShardError(err, &resp.Diagnostics):
			case alreadyExists(&resp.Diagnostics, err, "Namespace", body.Name):
			default:
				apiError(&resp.Diagnostics, "Could not create namespace "+body.Name, err)
			}
			return
		}
		plan.set(ns)
		if shard != "" {
			r.warnUnjoined(ctx, shard, &resp.Diagnostics)
		}
	})
}

func (r *namespaceResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := load[namespaceModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	name := state.Name.ValueString()
	ns, ok := refresh(ctx, resp, "Could not read namespace "+name, func() (*client.Namespace, error) { return r.p.client.GetNamespace(ctx, name) })
	if ok {
		state.set(ns)
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
	}
}

func (r *namespaceResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	updateFromPlan(ctx, req, resp, func(plan, _ *namespaceModel) {
		name := plan.Name.ValueString()
		desc, retention, protect := plan.Description.ValueString(), goDuration(plan.Retention), plan.DeletionProtection.ValueBool()
		body := client.UpdateNamespaceRequest{Description: &desc, Retention: &retention, DeletionProtection: &protect}
		ns, err := retry(ctx, true, func() (*client.Namespace, error) { return r.p.client.UpdateNamespace(ctx, name, body) })
		if err != nil {
			apiError(&resp.Diagnostics, "Could not update namespace "+name, err)
			return
		}
		plan.set(ns)
	})
}

func (r *namespaceResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := load[namespaceModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	name, force := state.Name.ValueString(), state.ForceDestroy.ValueBool()
	err := retryErr(ctx, true, func() error { return r.p.client.DeleteNamespace(ctx, name, force) })
	switch {
	case err == nil, client.IsNotFound(err):
	case client.ErrorCode(err) == client.CodeDeletionProtected:
		resp.Diagnostics.AddError("Namespace "+name+" is protected from deletion",
			apiDetail(err)+"\n\nSet deletion_protection = false and apply, then destroy it.")
	case client.ErrorCode(err) == client.CodeNamespaceNotEmpty:
		resp.Diagnostics.AddError("Namespace "+name+" is not empty",
			apiDetail(err)+"\n\nIt holds jobs, queues or schedules. To delete them with it, set force_destroy = true and "+
				"apply, then destroy it.")
	case client.ErrorCode(err) == client.CodeUnavailable && !state.Shard.IsNull():
		resp.Diagnostics.AddError("Could not delete namespace "+name, apiDetail(err)+"\n\nIts shard, self-hosted shard "+
			state.Shard.ValueString()+", must be reachable to delete it (once a node joined): is a node of it running?")
	default:
		apiError(&resp.Diagnostics, "Could not delete namespace "+name, err)
	}
}

// ImportState takes the namespace's name; the read that follows fills in
// the rest, its shard included.
func (r *namespaceResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("name"), req, resp)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("force_destroy"), false)...)
}

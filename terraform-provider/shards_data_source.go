package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
)

var _ datasource.DataSourceWithConfigure = (*shardsDataSource)(nil)

func newShardsDataSource() datasource.DataSource { return &shardsDataSource{} }

type shardsDataSource struct{ p *providerData }

type shardsDataModel struct {
	Name   types.String `tfsdk:"name"`
	Shards types.List   `tfsdk:"shards"`
}

var shardObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"id":               types.StringType,
	"name":             types.StringType,
	"nodes":            types.ListType{ElemType: types.StringType},
	"connected":        types.ListType{ElemType: types.StringType},
	"expected_nodes":   types.Int64Type,
	"token_expires_at": types.StringType,
	"namespaces":       types.ListType{ElemType: types.StringType},
	"created_at":       types.StringType,
}}

func (d *shardsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_shards"
}

func (d *shardsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	strings := func(desc string) schema.ListAttribute {
		return schema.ListAttribute{MarkdownDescription: desc, Computed: true, ElementType: types.StringType}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The tenant's self-hosted shards (`GET /api/v1/shards`): each with the nodes that joined it " +
			"of those its token was minted for, those connected now and the namespaces placed on it. Any key that may read namespaces may list them.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{
				MarkdownDescription: "Only the shards of this name. Left out, every shard.",
				Optional:            true,
				Validators:          []validator.String{shardName()},
			},
			"shards": schema.ListNestedAttribute{
				MarkdownDescription: "The shards, in the API's order (by id).",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"id":   schema.StringAttribute{MarkdownDescription: "The shard's id (`sh_…`).", Computed: true},
					"name": schema.StringAttribute{MarkdownDescription: "Its name.", Computed: true},
					"nodes": strings("The node ids that joined it so far; empty until the first `jobbie shard " +
						"--join-token` joins."),
					"connected": strings("The nodes whose tunnels the answering gateway holds now. With several " +
						"gateways, another one may hold the others': a node missing here is not necessarily down."),
					"expected_nodes": schema.Int64Attribute{MarkdownDescription: "How many nodes its join token was minted " +
						"for (`nodes`): the shard is complete once as many joined.", Computed: true},
					"token_expires_at": schema.StringAttribute{MarkdownDescription: "When its join token expires (RFC 3339), " +
						"while the token has nodes left to join; null once every node joined.", Computed: true},
					"namespaces": strings("The names of the tenant's namespaces placed on it (a shard is revoked only once " +
						"there are none)."),
					"created_at": schema.StringAttribute{MarkdownDescription: "When its join token was minted (RFC 3339).", Computed: true},
				}},
			},
		},
	}
}

func (d *shardsDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.p = configure(req.ProviderData, &resp.Diagnostics)
}

func (d *shardsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m shardsDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	shards, err := retry(ctx, false, func() ([]client.OwnedShard, error) { return d.p.client.Shards(ctx) })
	if err != nil {
		apiError(&resp.Diagnostics, "Could not list self-hosted shards", err)
		return
	}
	out := []attr.Value{}
	for _, sh := range shards {
		if !m.Name.IsNull() && sh.Name != m.Name.ValueString() {
			continue
		}
		nodes, diags := types.ListValueFrom(ctx, types.StringType, nonNil(sh.Nodes))
		resp.Diagnostics.Append(diags...)
		connected, diags := types.ListValueFrom(ctx, types.StringType, nonNil(sh.Connected))
		resp.Diagnostics.Append(diags...)
		namespaces, diags := types.ListValueFrom(ctx, types.StringType, nonNil(sh.Namespaces))
		resp.Diagnostics.Append(diags...)
		obj, diags := types.ObjectValue(shardObjectType.AttrTypes, map[string]attr.Value{
			"id": types.StringValue(sh.ID), "name": types.StringValue(sh.Name),
			"nodes": nodes, "connected": connected, "expected_nodes": types.Int64Value(int64(sh.ExpectedNodes)),
			"token_expires_at": timeValue(sh.TokenExpiresAt), "namespaces": namespaces,
			"created_at": timeValue(&sh.CreatedAt),
		})
		resp.Diagnostics.Append(diags...)
		out = append(out, obj)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	list, diags := types.ListValue(shardObjectType, out)
	resp.Diagnostics.Append(diags...)
	m.Shards = list
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// nonNil is s, or an empty list for nil: an empty attribute, not null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

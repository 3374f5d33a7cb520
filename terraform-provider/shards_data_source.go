package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
)

var _ datasource.DataSourceWithConfigure = (*shardsDataSource)(nil)

func newShardsDataSource() datasource.DataSource { return &shardsDataSource{} }

type shardsDataSource struct{ dataSourceBase }

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
	"healthy":          types.BoolType,
	"leader_id":        types.StringType,
	"node_health":      types.ListType{ElemType: nodeHealthObjectType},
}}

var nodeHealthObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"id":     types.StringType,
	"role":   types.StringType,
	"status": types.StringType,
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
					"healthy": schema.BoolAttribute{MarkdownDescription: "Whether its Raft group has a leader and a quorum " +
						"of its voters reachable, as a node connected to the answering gateway sees it; null when no node " +
						"is connected there or none answered in time.", Computed: true},
					"leader_id": schema.StringAttribute{MarkdownDescription: "The id of the node that leads it; null when " +
						"unknown (health unknown, or no leader known).", Computed: true},
					"node_health": schema.ListNestedAttribute{
						MarkdownDescription: "Each member of its Raft group (by id) as the node answering sees it; empty " +
							"when its health is unknown.",
						Computed: true,
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"id": schema.StringAttribute{MarkdownDescription: "The node's id.", Computed: true},
							"role": schema.StringAttribute{MarkdownDescription: "`leader`, `follower` (a voter that does " +
								"not lead) or `nonvoter` (replicates, does not vote).", Computed: true},
							"status": schema.StringAttribute{MarkdownDescription: "`healthy` (the answering node hears " +
								"from it) or `unreachable`.", Computed: true},
						}},
					},
				}},
			},
		},
	}
}

func (d *shardsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	m, ok := load[shardsDataModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	shards, ok := readCall(ctx, &resp.Diagnostics, "Could not list self-hosted shards", nil,
		func() ([]client.OwnedShard, error) { return d.p.client.Shards(ctx) })
	if !ok {
		return
	}
	out := []attr.Value{}
	for _, sh := range shards {
		if !m.Name.IsNull() && sh.Name != m.Name.ValueString() {
			continue
		}
		obj, diags := shardObject(ctx, sh)
		resp.Diagnostics.Append(diags...)
		out = append(out, obj)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	list, diags := types.ListValue(shardObjectType, out)
	resp.Diagnostics.Append(diags...)
	m.Shards = list
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// shardObject is one entry of shards. Health is optional in the listing
// (no node connected to the answering gateway, or none answered): then
// healthy and leader_id are null and node_health is empty.
func shardObject(ctx context.Context, sh client.OwnedShard) (types.Object, diag.Diagnostics) {
	var all diag.Diagnostics
	nodes, diags := types.ListValueFrom(ctx, types.StringType, nonNil(sh.Nodes))
	all.Append(diags...)
	connected, diags := types.ListValueFrom(ctx, types.StringType, nonNil(sh.Connected))
	all.Append(diags...)
	namespaces, diags := types.ListValueFrom(ctx, types.StringType, nonNil(sh.Namespaces))
	all.Append(diags...)
	healthy, leader := types.BoolNull(), types.StringNull()
	nodeHealth := []attr.Value{}
	if h := sh.Health; h != nil {
		healthy = types.BoolValue(h.Healthy)
		if h.LeaderID != "" {
			leader = types.StringValue(h.LeaderID)
		}
		for _, n := range h.Nodes {
			o, diags := types.ObjectValue(nodeHealthObjectType.AttrTypes, map[string]attr.Value{
				"id": types.StringValue(n.ID), "role": types.StringValue(n.Role), "status": types.StringValue(n.Status),
			})
			all.Append(diags...)
			nodeHealth = append(nodeHealth, o)
		}
	}
	nodeHealthList, diags := types.ListValue(nodeHealthObjectType, nodeHealth)
	all.Append(diags...)
	if all.HasError() {
		return types.ObjectNull(shardObjectType.AttrTypes), all
	}
	obj, diags := types.ObjectValue(shardObjectType.AttrTypes, map[string]attr.Value{
		"id": types.StringValue(sh.ID), "name": types.StringValue(sh.Name),
		"nodes": nodes, "connected": connected, "expected_nodes": types.Int64Value(int64(sh.ExpectedNodes)),
		"token_expires_at": timeValue(sh.TokenExpiresAt), "namespaces": namespaces,
		"created_at": timeValue(&sh.CreatedAt),
		"healthy":    healthy, "leader_id": leader, "node_health": nodeHealthList,
	})
	all.Append(diags...)
	return obj, all
}

// nonNil is s, or an empty list for nil: an empty attribute, not null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

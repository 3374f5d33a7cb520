package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
)

// A namespace placed on one of the tenant's self-hosted shards. Tenants
// never see where a namespace is, so the shard is what the configuration
// asked for at creation, never read back.

const shardNotFoundHint = "\n\nshard must be the id of one of the tenant's self-hosted shards (data source jobbie_shards " +
	"lists them), such as a jobbie_shard_join_token's shard_id."

// shardReady checks the shard before a namespace is created on it: it
// exists, and a node has joined it if the namespace has a retention (the
// shard applies it, so the API would create the namespace and then fail).
// A shard no node has joined takes a namespace, with a warning: until a
// node joins, the namespace neither serves nor can be deleted.
func (r *namespaceResource) shardReady(ctx context.Context, id string, plan *namespaceModel, diags *diag.Diagnostics) bool {
	sh, err := findShard(ctx, r.p.client, id)
	if err != nil {
		return true // a key that may not list shards: the create says what is wrong
	}
	if sh == nil {
		diags.AddAttributeError(path.Root("shard"), "Self-hosted shard not found",
			"The tenant has no self-hosted shard "+id+"."+shardNotFoundHint)
		return false
	}
	if len(sh.Nodes) > 0 {
		return true
	}
	if !plan.Retention.IsNull() {
		diags.AddAttributeError(path.Root("retention"), "Shard "+id+" has no node yet",
			"No node has joined self-hosted shard "+id+" ("+sh.Name+"), and a namespace's retention is applied by its shard. "+
				"Start its nodes (jobbie shard --join-token) and apply again, or leave retention out until they have joined.")
		return false
	}
	diags.AddAttributeWarning(path.Root("shard"), "Shard "+id+" has no node yet",
		"The namespace is placed on self-hosted shard "+id+" ("+sh.Name+"), which no node has joined yet. It serves jobs "+
			"once a node joins (jobbie shard --join-token); until then the API cannot delete it, so neither it nor the "+
			"shard can be destroyed.")
	return true
}

// shardUnread marks (in private state) an imported namespace whose shard
// Terraform does not know.
const shardUnread = "shard_unread"

const replaceShardDesc = "changing the shard replaces the namespace (an imported one adopts the configured shard)"

func shardPlanModifier() planmodifier.String {
	return stringplanmodifier.RequiresReplaceIf(replaceShard, replaceShardDesc, replaceShardDesc)
}

// replaceShard replaces a namespace whose shard changes, except an
// imported one's, where null only means "not known".
func replaceShard(ctx context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	if req.StateValue.IsNull() {
		unread, diags := req.Private.GetKey(ctx, shardUnread)
		resp.Diagnostics.Append(diags...)
		if len(unread) > 0 {
			return
		}
	}
	resp.RequiresReplace = true
}

package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/jobbie/jobbie/client"
)

// A namespace placed on one of the tenant's self-hosted shards. The API
// names the shard of a namespace on the tenant's own shard (never a hosted
// one), so the provider reads it back: drift and an import that does not
// match the configuration show as a replacement.

const shardNotFoundHint = "\n\nshard must be the id of one of the tenant's self-hosted shards (data source jobbie_shards " +
	"lists them), such as a jobbie_shard_join_token's shard_id."

// createOnShardError explains the API's refusals of a namespace on a
// shard (nothing was created): an unknown shard, or a retention on a shard
// no node has joined, which the shard would have to apply. False when err
// is neither.
func createOnShardError(err error, diags *diag.Diagnostics) bool {
	e, ok := client.AsError(err)
	switch {
	case client.IsNotFound(err):
		diags.AddAttributeError(path.Root("shard"), "Self-hosted shard not found", apiDetail(err)+shardNotFoundHint)
	case ok && client.IsConflict(err) && e.Field == "retention":
		diags.AddAttributeError(path.Root("retention"), "The shard has no node yet", apiDetail(err)+
			"\n\nA namespace's retention is applied by its shard. Start the shard's nodes (jobbie shard --join-token) "+
			"and apply again, or leave retention out until one has joined.")
	default:
		return false
	}
	return true
}

// warnUnjoined warns, after a namespace was placed on shard id, when no
// node has joined it yet: the namespace serves jobs once one does.
func (r *namespaceResource) warnUnjoined(ctx context.Context, id string, diags *diag.Diagnostics) {
	sh, err := findShard(ctx, r.p.client, id)
	if err != nil || sh == nil || len(sh.Nodes) > 0 {
		return // a key that may not list shards, or nothing to say
	}
	diags.AddAttributeWarning(path.Root("shard"), "Shard "+id+" has no node yet",
		"The namespace is placed on self-hosted shard "+id+" ("+sh.Name+"), which no node has joined yet. It serves jobs "+
			"once a node joins (jobbie shard --join-token).")
}

package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// A join token is how a self-hosted shard comes to be: minting one
// creates the shard's record at once, and the token is the only way its
// nodes join. The resource is therefore the shard: its id is the shard's,
// destroying it revokes the shard, and a shard revoked elsewhere is gone
// from the state. The API shows the token once, so there is no import.

var _ resource.ResourceWithConfigure = (*shardJoinTokenResource)(nil)

func newShardJoinTokenResource() resource.Resource { return &shardJoinTokenResource{} }

type shardJoinTokenResource struct{ resourceBase }

type shardJoinTokenModel struct {
	ID        types.String   `tfsdk:"id"`
	Name      types.String   `tfsdk:"name"`
	Nodes     types.Int64    `tfsdk:"nodes"`
	ExpiresIn durationString `tfsdk:"expires_in"`
	Token     types.String   `tfsdk:"token"`
	ShardID   types.String   `tfsdk:"shard_id"`
	ExpiresAt types.String   `tfsdk:"expires_at"`
}

func (r *shardJoinTokenResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_shard_join_token"
}

func (r *shardJoinTokenResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A self-hosted shard of the tenant, and the join token its nodes join it with " +
			"(`jobbie shard --join-token`; docs/operate/self-hosting.md). Minting the token creates the shard " +
			"(`shard_id`) at once, so this resource is the shard's lifecycle.\n\n" +
			"Destroying it **revokes the shard** (`DELETE /api/v1/shards/{id}`): its nodes are refused from then on. " +
			"The API refuses while namespaces are on the shard: destroy them first (a `jobbie_namespace` whose `shard` " +
			"refers to this resource's `shard_id` is destroyed before it; one on a shard no node has joined yet holds " +
			"nothing, and is deleted at once).\n\n" +
			"Changing any argument replaces it: the old shard is revoked, and a new one, with a new id and token, is " +
			"minted. The namespaces whose `shard` refers to its `shard_id` are replaced with it: new, empty ones on the " +
			"new shard (one that holds jobs is destroyed only with `force_destroy`; `lifecycle { prevent_destroy = true }` " +
			"guards against the whole replacement). A shard revoked outside Terraform is removed " +
			"from the state and planned for creation again.\n\n" +
			"The token joins `nodes` nodes, each once, until `expires_at`. A token that expired or was spent is not " +
			"renewed and leaves the shard as it is: the API has no way to join further nodes to an existing shard.\n\n" +
			"Only an **owner** key may mint tokens and revoke shards. The API shows the token once, in its answer to the " +
			"create, so it is kept in the Terraform state (mark outputs that use it `sensitive`), and the resource " +
			"cannot be imported; look existing shards up with the `jobbie_shards` data source.",
		Attributes: map[string]schema.Attribute{
			"id": computedKept("The shard's id, as `shard_id`."),
			"name": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("The shard's name, for people: 1-%d printable characters, not starting or ending with a space. "+
					"Changing it replaces the shard.", maxShardName),
				Required:      true,
				Validators:    []validator.String{shardName()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"nodes": schema.Int64Attribute{
				MarkdownDescription: "How many nodes the token joins, each once: the size of the shard's Raft group, `1`, `3` or `5`. " +
					"Defaults to `1`. Changing it replaces the shard.",
				Optional:      true,
				Computed:      true,
				Default:       int64default.StaticInt64(1),
				Validators:    []validator.Int64{shardNodes{}},
				PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplace()},
			},
			"expires_in": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("How long the token joins nodes, a duration from `%s` to `%s`; left out, `%s`. "+
					"Changing it replaces the shard.", wire.FormatDuration(wire.MinJoinTokenTTL),
					wire.FormatDuration(wire.MaxJoinTokenTTL), wire.FormatDuration(wire.DefaultJoinTokenTTL)),
				Optional:      true,
				CustomType:    durationType{},
				Validators:    []validator.String{duration(wire.MinJoinTokenTTL, wire.MaxJoinTokenTTL)},
				PlanModifiers: []planmodifier.String{sameDuration, stringplanmodifier.RequiresReplace()},
			},
			"token":      computedSecret("The join token (`jst_…`), for `jobbie shard --join-token`. Known at creation only."),
			"shard_id":   computedKept("The new shard's id (`sh_…`): what a `jobbie_namespace`'s `shard` names."),
			"expires_at": computedKept("When the token stops joining nodes (RFC 3339). The shard outlives it."),
		},
	}
}

func (r *shardJoinTokenResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	createFromPlan(ctx, req, resp, func(plan *shardJoinTokenModel) {
		name, nodes, ttl := plan.Name.ValueString(), int(plan.Nodes.ValueInt64()), goDuration(plan.ExpiresIn)
		tok, err := retry(ctx, true, func() (*client.JoinToken, error) { return r.p.client.CreateJoinToken(ctx, name, ttl, nodes) })
		if err != nil {
			if isForbidden(err) {
				resp.Diagnostics.AddError("Could not mint a join token for shard "+name, apiDetail(err)+ownerOnlyHint)
				return
			}
			apiErrorAt(&resp.Diagnostics, "Could not mint a join token for shard "+name, err, "name", "nodes", "expires_in")
			return
		}
		plan.ID = types.StringValue(tok.ShardID)
		plan.ShardID = types.StringValue(tok.ShardID)
		plan.Token = types.StringValue(tok.Token)
		plan.ExpiresAt = timeValue(&tok.ExpiresAt)
	})
}

// findShard is the tenant's self-hosted shard id, nil when there is none
// (revoked, or never this tenant's).
func findShard(ctx context.Context, c *client.Client, id string) (*client.OwnedShard, error) {
	shards, err := retry(ctx, false, func() ([]client.OwnedShard, error) { return c.Shards(ctx) })
	if err != nil {
		return nil, err
	}
	return shardByID(shards, id), nil
}

// shardByID is the shard of shards with id, nil if none.
func shardByID(shards []client.OwnedShard, id string) *client.OwnedShard {
	for i := range shards {
		if shards[i].ID == id {
			return &shards[i]
		}
	}
	return nil
}

// Read keeps the state while the shard exists: the token and its expiry
// are not readable after the create, and the arguments cannot change.
func (r *shardJoinTokenResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, ok := load[shardJoinTokenModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	id := state.ShardID.ValueString()
	sh, err := findShard(ctx, r.p.client, id)
	if err != nil {
		apiError(&resp.Diagnostics, "Could not read self-hosted shard "+id, err)
		return
	}
	if sh == nil {
		resp.State.RemoveResource(ctx)
		return
	}
	state.Name = types.StringValue(sh.Name)
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// Update is never planned (every argument replaces); it keeps the plan.
func (r *shardJoinTokenResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	updateFromPlan(ctx, req, resp, func(_, _ *shardJoinTokenModel) {})
}

func (r *shardJoinTokenResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := load[shardJoinTokenModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	id := state.ShardID.ValueString()
	err := retryErr(ctx, true, func() error { return r.p.client.RevokeShard(ctx, id) })
	switch {
	case err == nil, client.IsNotFound(err):
	case client.IsConflict(err):
		resp.Diagnostics.AddError("Self-hosted shard "+id+" still holds namespaces",
			apiDetail(err)+"\n\nDestroying this resource revokes the shard, which the API refuses while namespaces are on it. "+
				"Destroy those namespaces first (a jobbie_namespace whose shard refers to this resource's shard_id is "+
				"destroyed before it), then destroy this resource again.")
	case isForbidden(err):
		resp.Diagnostics.AddError("Could not revoke self-hosted shard "+id, apiDetail(err)+ownerOnlyHint)
	default:
		apiError(&resp.Diagnostics, "Could not revoke self-hosted shard "+id, err)
	}
}

// ownerOnlyHint follows a 403 on minting or revoking.
const ownerOnlyHint = "\n\nOnly a key of role owner (such as the tenant's owner key) may mint join tokens and revoke shards."

func isForbidden(err error) bool {
	e, ok := client.AsError(err)
	return ok && e.Status == 403
}

// maxShardName is the API's bound on a shard's name, in bytes.
const maxShardName = 100

func shardName() validator.String {
	return stringCheck{"shard name", func(s string) error {
		switch {
		case s == "" || len(s) > maxShardName:
			return fmt.Errorf("a shard name is 1-%d bytes; %q is %d", maxShardName, s, len(s))
		case s != strings.TrimSpace(s):
			return fmt.Errorf("a shard name must not start or end with spaces (the API trims them): %q", s)
		case strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }):
			return fmt.Errorf("a shard name must not contain control characters")
		}
		return nil
	}}
}

// shardIDPattern is what the API accepts as a shard id.
var shardIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

func shardID() validator.String {
	return stringCheck{"shard id", func(s string) error {
		if !shardIDPattern.MatchString(s) {
			return fmt.Errorf("shard %q is not a shard id: 1-63 letters, digits, '.', '_' or '-' (like sh_…, "+
				"a jobbie_shard_join_token's shard_id)", s)
		}
		return nil
	}}
}

// shardNodes accepts the sizes of a Raft group worth running: 1, 3 or 5.
// The API would take 2 or 4 too, which tolerate no more lost nodes than
// one fewer, and then wait for a node that may never come.
type shardNodes struct{}

func (shardNodes) Description(context.Context) string { return "1, 3 or 5" }
func (v shardNodes) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (shardNodes) ValidateInt64(_ context.Context, req validator.Int64Request, resp *validator.Int64Response) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	n := req.ConfigValue.ValueInt64()
	why := "a shard is a Raft group of 1, 3 or 5 nodes"
	switch n {
	case 1, 3, 5:
		return
	case 2, 4:
		why = fmt.Sprintf("a shard is a Raft group, which needs a majority of its nodes: %d nodes survive no more lost nodes than %d do", n, n-1)
	}
	resp.Diagnostics.AddAttributeError(req.Path, "Invalid number of shard nodes",
		fmt.Sprintf("nodes must be 1, 3 or 5, not %d: %s.", n, why))
}

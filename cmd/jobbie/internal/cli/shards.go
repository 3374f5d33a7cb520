package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// shardsCmd is `jobbie shards`: the tenant's self-hosted shards, listed;
// a new one's join token, a token for more nodes of one, a node's
// removal and a shard's revocation, which are the owner's alone.
func shardsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "shards",
		Short: "List self-hosted shards; create one, add or remove nodes, revoke one",
		Long: `shards lists the tenant's self-hosted shards: their joined nodes of the
number expected, the nodes connected to the gateway asked, and the
namespaces placed there. Minting tokens, removing nodes and revoking take
an owner key. A token is printed once; each node joins with it
(jobbie shard --join-token …).

  jobbie shards create --name dc1 --nodes 3
  jobbie shards add-nodes sh_… --nodes 1          # a token for one more node
  jobbie shards remove-node sh_… n3               # its id is never joined again
  jobbie shards revoke sh_…                       # once no namespace is on it

Replacing a lost node: remove-node, then take it out of the shard's Raft
group at a surviving node (jobbie shard remove n3 --url … --data-dir …),
then add-nodes and start the new node with a new --node-id and --join.`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runAPI(cmd, api, "shards", tenancy.ActNamespaceRead,
			func(ctx context.Context, c *client.Client) ([]client.OwnedShard, error) {
				ss, err := c.Shards(ctx)
				if ss == nil {
					ss = []client.OwnedShard{}
				}
				return ss, err
			},
			printShards)
	}
	cmd.AddCommand(shardsCreateCmd(api), shardsAddNodesCmd(api), shardsRemoveNodeCmd(api), shardsRevokeCmd(api))
	return cmd
}

// idPartRE is what a shard or node id may be (the certificates' rule).
var idPartRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

func checkShardPart(kind, id string) error {
	if !idPartRE.MatchString(id) {
		return fmt.Errorf("%s id %q must be 1-63 letters, digits, '.', '_' or '-'", kind, id)
	}
	return nil
}

// checkToken refuses a token's nodes and lifetime the API would refuse.
func checkToken(nodes int, expiresIn time.Duration) error {
	if nodes < 1 || nodes > wire.MaxJoinTokenNodes {
		return fmt.Errorf("--nodes must be 1 to %d, not %d", wire.MaxJoinTokenNodes, nodes)
	}
	if expiresIn < wire.MinJoinTokenTTL || expiresIn > wire.MaxJoinTokenTTL {
		return fmt.Errorf("--expires-in must be %s to %s, not %s", wire.FormatDuration(wire.MinJoinTokenTTL),
			wire.FormatDuration(wire.MaxJoinTokenTTL), expiresIn)
	}
	return nil
}

// ownerOnly runs an owner's call: a 403 says an owner key is needed (a
// role's permissions do not grant it).
func ownerOnly[T any](call func(context.Context, *client.Client) (T, error)) func(context.Context, *client.Client) (T, error) {
	return func(ctx context.Context, c *client.Client) (T, error) {
		v, err := call(ctx, c)
		if client.IsForbidden(err) {
			msg, _ := strings.CutPrefix(err.Error(), "jobbie: ")
			err = &wordedError{msg: msg + " (this needs a key of role owner)", err: err}
		}
		return v, err
	}
}

func shardsCreateCmd(api *Conn) *cobra.Command {
	var (
		name      string
		nodes     int
		expiresIn time.Duration
	)
	cmd := &cobra.Command{
		Use:   "create --name <name>",
		Short: "Create a self-hosted shard: a join token for its nodes, printed this once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			name = strings.TrimSpace(name)
			if name == "" || len(name) > 100 || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
				return errors.New("--name must be 1-100 printable characters")
			}
			if err := checkToken(nodes, expiresIn); err != nil {
				return err
			}
			return runAPI(cmd, api, "create shard "+name, "", ownerOnly(
				func(ctx context.Context, c *client.Client) (*client.JoinToken, error) {
					return c.CreateJoinToken(ctx, name, expiresIn, nodes)
				}), printJoinToken)
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "the shard's name (required)")
	f.IntVar(&nodes, "nodes", 1, "how many nodes join with the token: 1, 3 or 5 make a Raft group")
	f.DurationVar(&expiresIn, "expires-in", wire.DefaultJoinTokenTTL, "the token's lifetime, 1m to 24h")
	return cmd
}

func shardsAddNodesCmd(api *Conn) *cobra.Command {
	var (
		nodes     int
		expiresIn time.Duration
	)
	cmd := &cobra.Command{
		Use:   "add-nodes <shard-id>",
		Short: "A join token for more nodes of a shard (new node ids), printed this once",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkShardPart("shard", args[0]); err != nil {
				return err
			}
			if err := checkToken(nodes, expiresIn); err != nil {
				return err
			}
			return runAPI(cmd, api, "shard "+args[0], "", ownerOnly(
				func(ctx context.Context, c *client.Client) (*client.JoinToken, error) {
					return c.AddShardNodes(ctx, args[0], nodes, expiresIn)
				}), printJoinToken)
		},
	}
	f := cmd.Flags()
	f.IntVar(&nodes, "nodes", 1, "how many more nodes join with the token (the shard holds at most 7)")
	f.DurationVar(&expiresIn, "expires-in", wire.DefaultJoinTokenTTL, "the token's lifetime, 1m to 24h")
	return cmd
}

// removedNode is remove-node's answer.
type removedNode struct {
	Shard   string `json:"shard_id"`
	Node    string `json:"node_id"`
	Removed bool   `json:"removed"`
}

func shardsRemoveNodeCmd(api *Conn) *cobra.Command {
	return &cobra.Command{
		Use:   "remove-node <shard-id> <node-id>",
		Short: "Remove a node from a shard for good: its tunnels are cut, its id never joins again",
		Args:  exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkShardPart("shard", args[0]); err != nil {
				return err
			}
			if err := checkShardPart("node", args[1]); err != nil {
				return err
			}
			return runAPI(cmd, api, "shard "+args[0], "", ownerOnly(
				func(ctx context.Context, c *client.Client) (removedNode, error) {
					err := c.RemoveShardNode(ctx, args[0], args[1])
					return removedNode{Shard: args[0], Node: args[1], Removed: err == nil}, err
				}),
				func(w io.Writer, r removedNode) error {
					_, err := fmt.Fprintf(w, "node %s removed from shard %s; take it out of the shard's Raft group at a node that remains:\n"+
						"  jobbie shard remove %s --url <node's http address> --data-dir <node's data directory>\n", r.Node, r.Shard, r.Node)
					return err
				})
		},
	}
}

func shardsRevokeCmd(api *Conn) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke <shard-id>",
		Short: "Revoke a self-hosted shard (none of the tenant's namespaces may be on it): its nodes are refused from then on",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkShardPart("shard", args[0]); err != nil {
				return err
			}
			return runAPI(cmd, api, "shard "+args[0], "", ownerOnly(
				func(ctx context.Context, c *client.Client) (deleted, error) {
					err := c.RevokeShard(ctx, args[0])
					return deleted{ID: args[0], Deleted: err == nil}, err
				}),
				func(w io.Writer, d deleted) error { _, err := fmt.Fprintf(w, "shard %s revoked\n", d.ID); return err })
		},
	}
}

func printJoinToken(w io.Writer, t *client.JoinToken) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "SHARD\tNAME\tNODES\tEXPIRES")
	fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", t.ShardID, t.Name, t.Nodes, stamp(&t.ExpiresAt))
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\njoin token (shown this once; each node joins with it under its own --node-id):\n%s\n", t.Token)
	return err
}

func printShards(w io.Writer, ss []client.OwnedShard) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tNAME\tNODES\tCONNECTED\tNAMESPACES\tTOKEN EXPIRES\tCREATED")
	for _, s := range ss {
		nodes := fmt.Sprintf("%s (%d/%d)", orDash(strings.Join(s.Nodes, ",")), len(s.Nodes), s.ExpectedNodes)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Name, nodes, orDash(strings.Join(s.Connected, ",")),
			orDash(strings.Join(s.Namespaces, ",")), stamp(s.TokenExpiresAt), stamp(&s.CreatedAt))
	}
	return tw.Flush()
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// keysCmd is `jobbie keys`: the tenant's API keys, listed, created,
// shown, rotated and revoked. A new or rotated secret is printed this
// once; the server keeps only its hash.
func keysCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "List API keys; create, get, rotate or revoke one",
		Long: `keys lists the tenant's API keys (the ones the calling key may see),
revoked ones included. A secret is printed once, by create and rotate:

  jobbie keys create --name ci --role producer --namespaces orders
  jobbie keys create --name ops --role admin --namespaces '*' --expires-in 720h -o json | jq -r .key
  jobbie keys rotate key_01… --grace 1h
  jobbie keys revoke key_01…`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runAPI(cmd, api, "keys", tenancy.ActKeyRead,
			func(ctx context.Context, c *client.Client) ([]client.Key, error) {
				ks, err := c.ListKeys(ctx)
				if ks == nil {
					ks = []client.Key{}
				}
				return ks, err
			},
			func(w io.Writer, ks []client.Key) error { return printKeys(w, time.Now(), ks...) })
	}
	get := &cobra.Command{
		Use: "get <key-id>", Short: "Show an API key (never its secret)", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := CheckID("key", args[0]); err != nil {
				return err
			}
			return runAPI(cmd, api, "key "+args[0], tenancy.ActKeyRead,
				func(ctx context.Context, c *client.Client) (*client.Key, error) { return c.GetKey(ctx, args[0]) },
				func(w io.Writer, k *client.Key) error { return printKeys(w, time.Now(), *k) })
		},
	}
	revoke := &cobra.Command{
		Use: "revoke <key-id>", Aliases: []string{"delete"}, Short: "Revoke an API key: it stops working within seconds",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := CheckID("key", args[0]); err != nil {
				return err
			}
			return runAPI(cmd, api, "key "+args[0], tenancy.ActKeyManage,
				func(ctx context.Context, c *client.Client) (deleted, error) {
					return deleted{ID: args[0], Deleted: true}, c.DeleteKey(ctx, args[0])
				},
				func(w io.Writer, d deleted) error { _, err := fmt.Fprintf(w, "key %s revoked\n", d.ID); return err })
		},
	}
	cmd.AddCommand(keysCreateCmd(api), get, keysRotateCmd(api), revoke)
	return cmd
}

func keysCreateCmd(api *Conn) *cobra.Command {
	var (
		req       client.CreateKeyRequest
		role      string
		expiresIn time.Duration
		expiresAt *time.Time
	)
	cmd := &cobra.Command{
		Use:   "create --name <name> --role <role>",
		Short: "Create an API key; its secret is printed this once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if req.Name == "" || role == "" {
				return errors.New("give the key a --name and a --role")
			}
			if err := tenancy.ValidateKeyName(req.Name); err != nil {
				return err
			}
			if !tenancy.IsBuiltinRole(role) && tenancy.ValidateRoleName(role) != nil {
				return fmt.Errorf("--role %q is neither a built-in role (%s) nor a custom role's name",
					role, strings.Join(roleNames(), ", "))
			}
			req.Role = tenancy.Role(role)
			for _, ns := range req.Namespaces {
				if ns != tenancy.AllNamespaces {
					if err := tenancy.ValidateNamespace(ns); err != nil {
						return fmt.Errorf("--namespaces: %w", err)
					}
				}
			}
			switch {
			case expiresIn < 0:
				return errors.New("--expires-in must not be negative")
			case expiresIn > 0 && expiresAt != nil:
				return errors.New("give --expires-in or --expires-at, not both")
			case expiresIn > 0:
				t := time.Now().Add(expiresIn)
				req.ExpiresAt = &t
			case expiresAt != nil:
				req.ExpiresAt = expiresAt
			}
			return runAPI(cmd, api, "create key "+req.Name, tenancy.ActKeyManage,
				func(ctx context.Context, c *client.Client) (*client.CreatedKey, error) { return c.CreateKey(ctx, req) },
				func(w io.Writer, k *client.CreatedKey) error {
					if err := printKeys(w, time.Now(), k.Key); err != nil {
						return err
					}
					_, err := fmt.Fprintf(w, "\nsecret (shown this once; store it now):\n%s\n", k.Token)
					return err
				})
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Name, "name", "", "the key's name: 1-64 letters, digits, spaces, '.', '_', ':' or '-'")
	f.StringVar(&role, "role", "", "owner, admin, developer, producer, worker, viewer, billing, or a custom role")
	f.StringSliceVar(&req.Namespaces, "namespaces", nil, "namespaces the key may use; '*' for all (default: the calling key's default namespace)")
	f.StringVar(&req.Description, "description", "", "free text")
	f.DurationVar(&expiresIn, "expires-in", 0, "the key stops working this long from now (default: never)")
	f.Var(timeValue{&expiresAt}, "expires-at", "the key stops working at this time (RFC 3339 or a date)")
	return cmd
}

func roleNames() []string {
	out := make([]string, len(tenancy.TenantRoles))
	for i, r := range tenancy.TenantRoles {
		out[i] = string(r)
	}
	return out
}

// maxGrace is the longest a rotated key's old secret may keep working.
const maxGrace = 7 * 24 * time.Hour

func keysRotateCmd(api *Conn) *cobra.Command {
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "rotate <key-id>",
		Short: "Give a key a new secret (printed this once); the old one works on for --grace",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := CheckID("key", args[0]); err != nil {
				return err
			}
			if grace < 0 || grace > maxGrace {
				return fmt.Errorf("--grace must be 0 to 168h, not %s", grace)
			}
			return runAPI(cmd, api, "key "+args[0], tenancy.ActKeyManage,
				func(ctx context.Context, c *client.Client) (*client.RotatedKey, error) {
					return c.RotateKey(ctx, args[0], grace)
				},
				func(w io.Writer, k *client.RotatedKey) error {
					if err := printKeys(w, time.Now(), k.Key); err != nil {
						return err
					}
					until := "is refused from now on"
					if k.PreviousKeyValidUntil.After(time.Now()) {
						until = "works until " + stamp(&k.PreviousKeyValidUntil)
					}
					_, err := fmt.Fprintf(w, "\nnew secret (shown this once; store it now; the old one %s):\n%s\n", until, k.Token)
					return err
				})
		},
	}
	cmd.Flags().DurationVar(&grace, "grace", 0, "how long the old secret keeps working, up to 168h (default: it stops at once)")
	return cmd
}

// keyStatus is "revoked", "expired" or "active" at now.
func keyStatus(k client.Key, now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return "revoked"
	case k.ExpiresAt != nil && !k.ExpiresAt.After(now):
		return "expired"
	}
	return "active"
}

func printKeys(w io.Writer, now time.Time, ks ...client.Key) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tNAME\tROLE\tNAMESPACES\tSTATUS\tCREATED\tEXPIRES\tLAST USED")
	for _, k := range ks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Role, orDash(strings.Join(k.Namespaces, ",")),
			keyStatus(k, now), stamp(&k.CreatedAt), stamp(k.ExpiresAt), stamp(k.LastUsedAt))
	}
	return tw.Flush()
}

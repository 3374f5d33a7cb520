package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// `jobbie sso`: the tenant's console sign-in through its identity
// provider (docs/api/sso.md). The client secret is read from a file or
// stdin, never from a flag's value, which would sit in shell history and
// the process list; the server judges every field (a 400 naming it).

func ssoCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sso",
		Short: "Show, set or delete the tenant's console sign-in through its identity provider",
		Long: `sso shows or changes how people sign in to the console with the tenant's
OpenID Connect provider. set replaces the whole configuration: a list
flag left out is empty, and the client secret is read from
--client-secret-file (- for stdin); without it the secret set before is
kept (one is required the first time). The answer never holds the secret.

  jobbie sso get
  jobbie sso set --issuer-url https://login.example.com --client-id jobbie-console \
      --client-secret-file secret.txt --allowed-domain example.com \
      --group-role platform=admin --default-role viewer
  printf %s "$SECRET" | jobbie sso set ... --client-secret-file -
  jobbie sso delete

Register <gateway>/console/api/sso/callback as the client's redirect URI
at the provider. Every subcommand needs sso.manage: the owner's alone.`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	get := &cobra.Command{
		Use: "get", Short: "Show the configuration (never its secret)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAPI(cmd, api, "sso", tenancy.ActSSOManage,
				func(ctx context.Context, c *client.Client) (*client.SSOConfig, error) { return c.GetSSO(ctx) }, printSSO)
		},
	}
	del := &cobra.Command{
		Use: "delete", Short: "End sign-in through the provider, and the sessions it let in", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAPI(cmd, api, "sso", tenancy.ActSSOManage,
				func(ctx context.Context, c *client.Client) (deleted, error) {
					return deleted{ID: "sso", Deleted: true}, c.DeleteSSO(ctx)
				},
				func(w io.Writer, _ deleted) error {
					_, err := fmt.Fprintln(w, "sign-in through the identity provider deleted")
					return err
				})
		},
	}
	cmd.AddCommand(get, ssoSetCmd(api), del)
	return cmd
}

func ssoSetCmd(api *Conn) *cobra.Command {
	var req client.SSORequest
	var secretFile string
	var groupRoles []string
	set := &cobra.Command{
		Use: "set", Short: "Replace the whole configuration", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req.GroupRoles = nil
			for _, gr := range groupRoles {
				group, role, ok := strings.Cut(gr, "=")
				if !ok || strings.TrimSpace(group) == "" || strings.TrimSpace(role) == "" {
					return fmt.Errorf("--group-role %q: want GROUP=ROLE", gr)
				}
				req.GroupRoles = append(req.GroupRoles, client.SSOGroupRole{Group: strings.TrimSpace(group), Role: strings.TrimSpace(role)})
			}
			req.ClientSecret = ""
			if secretFile != "" {
				s, err := readSecretFrom(cmd, "--client-secret-file", secretFile)
				if err != nil {
					return err
				}
				req.ClientSecret = s
			}
			return runAPI(cmd, api, "sso", tenancy.ActSSOManage,
				func(ctx context.Context, c *client.Client) (*client.SSOConfig, error) { return c.PutSSO(ctx, req) }, printSSO)
		},
	}
	f := set.Flags()
	f.StringVar(&req.IssuerURL, "issuer-url", "", "the provider's issuer (https): its discovery document is under it")
	f.StringVar(&req.ClientID, "client-id", "", "the console's client id at the provider")
	f.StringVar(&secretFile, "client-secret-file", "", "read the client's secret from this file (- for stdin); left out: keep the one set before")
	f.StringArrayVar(&req.AllowedDomains, "allowed-domain", nil, "admit a person whose verified email is at this domain (again for more)")
	f.StringArrayVar(&req.AllowedGroups, "allowed-group", nil, "admit a person in this group (again for more)")
	f.StringVar(&req.GroupsClaim, "groups-claim", "", "the claim listing a person's groups (default groups)")
	f.StringArrayVar(&groupRoles, "group-role", nil, "GROUP=ROLE: a person in GROUP gets ROLE; the first that matches counts (again for more, in order)")
	f.StringVar(&req.DefaultRole, "default-role", "", "the role of an admitted person in no mapped group (empty: such a person is refused)")
	return set
}

func printSSO(w io.Writer, s *client.SSOConfig) error {
	tw := newTable(w)
	orNone := func(v []string) string {
		if len(v) == 0 {
			return "none"
		}
		return strings.Join(v, ", ")
	}
	roles := make([]string, 0, len(s.GroupRoles))
	for _, gr := range s.GroupRoles {
		roles = append(roles, gr.Group+"="+gr.Role)
	}
	def := s.DefaultRole
	if def == "" {
		def = "none (refused)"
	}
	fmt.Fprintf(tw, "ISSUER URL\t%s\n", s.IssuerURL)
	fmt.Fprintf(tw, "CLIENT ID\t%s\n", s.ClientID)
	fmt.Fprintf(tw, "CLIENT SECRET SET\t%t\n", s.ClientSecretSet)
	fmt.Fprintf(tw, "ALLOWED DOMAINS\t%s\n", orNone(s.AllowedDomains))
	fmt.Fprintf(tw, "ALLOWED GROUPS\t%s\n", orNone(s.AllowedGroups))
	fmt.Fprintf(tw, "GROUPS CLAIM\t%s\n", s.GroupsClaim)
	fmt.Fprintf(tw, "GROUP ROLES\t%s\n", orNone(roles))
	fmt.Fprintf(tw, "DEFAULT ROLE\t%s\n", def)
	fmt.Fprintf(tw, "REDIRECT PATH\t%s\n", s.RedirectPath)
	fmt.Fprintf(tw, "UPDATED\t%s\n", s.UpdatedAt.Format("2006-01-02T15:04:05Z07:00"))
	return tw.Flush()
}

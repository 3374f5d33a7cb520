package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// `jobbie encryption`: the request's namespace's encryption at rest and
// the tenant's key (docs/api/encryption.md). The key is read from a file
// or stdin, never from a flag's value, so it lands in no shell history
// or process list; the server judges it (a 400 naming tenant_key).

func encryptionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "encryption",
		Short: "Show or change the namespace's encryption at rest and its tenant key",
		Long: `encryption shows or changes whether the namespace's payloads, results,
checkpoints and error texts are sealed on its shard, and the tenant's own
key that wraps the namespace's keys. It works on the key's default
namespace, or --namespace.

  jobbie encryption get
  jobbie encryption enable                                  # under the operator's master key
  openssl rand -base64 32 > tenant.key
  jobbie encryption enable --tenant-key-file tenant.key     # under the tenant's key
  jobbie encryption enable --search-decrypt                 # searches may open payloads
  openssl rand -base64 32 | tee new.key | jobbie encryption rotate --tenant-key-file -
  jobbie encryption revoke --confirm                        # everything sealed under the key: unreadable
  jobbie encryption disable                                 # new jobs stored in the clear

The tenant key is 32 random bytes in base64 or hex, read from a file or
from stdin (--tenant-key-file -); no flag takes it as a value, so it is
never in the shell's history. No answer holds it: TENANT KEY ID names it.

get needs namespace.read; the rest encryption.manage, the owner's alone.`,
		Args: cobra.NoArgs,
	}
	api := addConn(cmd, gatewayAPI)
	get := &cobra.Command{
		Use: "get", Short: "Show the namespace's encryption settings (never a key)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return callEncryption(cmd, api, tenancy.ActNamespaceRead, nil)
		},
	}
	disable := &cobra.Command{
		Use:   "disable",
		Short: "Stop sealing what new jobs store; what was sealed stays readable",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return callEncryption(cmd, api, tenancy.ActEncryptionManage, &client.EncryptionSpec{Enabled: new(false)})
		},
	}
	cmd.AddCommand(get, encryptionEnableCmd(api), disable, encryptionRotateCmd(api), encryptionRevokeCmd(api))
	return cmd
}

func encryptionEnableCmd(api *Conn) *cobra.Command {
	var keyFile string
	var searchDecrypt bool
	cmd := &cobra.Command{
		Use:   "enable [--tenant-key-file FILE|-] [--search-decrypt[=false]]",
		Short: "Seal what new jobs store, under the operator's key or the tenant's",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec := client.EncryptionSpec{Enabled: new(true)}
			if cmd.Flags().Changed("search-decrypt") {
				spec.SearchDecrypt = &searchDecrypt
			}
			if cmd.Flags().Changed("tenant-key-file") {
				key, err := readTenantKey(cmd, keyFile)
				if err != nil {
					return err
				}
				spec.TenantKey = key
			}
			return callEncryption(cmd, api, tenancy.ActEncryptionManage, &spec)
		},
	}
	tenantKeyFlag(cmd, &keyFile, "wrap the namespace's keys by the tenant key in this file (- reads stdin)")
	cmd.Flags().BoolVar(&searchDecrypt, "search-decrypt", false,
		"let searches with payload_contains, payload_jq or error_contains open values (--search-decrypt=false forbids it again)")
	return cmd
}

func encryptionRotateCmd(api *Conn) *cobra.Command {
	var keyFile string
	cmd := &cobra.Command{
		Use:   "rotate --tenant-key-file FILE|-",
		Short: "Supply the tenant key, or a new one in its place; everything stays readable",
		Long: `rotate wraps the namespace's keys by the tenant key given: the first one
takes the operator's master key's place, a later one the key before it.
Nothing stored is rewritten and everything stays readable; after a revoke,
a key starts the next generation of keys.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("tenant-key-file") {
				return errors.New("no key: give --tenant-key-file with a file holding it, or - to read it from stdin")
			}
			key, err := readTenantKey(cmd, keyFile)
			if err != nil {
				return err
			}
			return callEncryption(cmd, api, tenancy.ActEncryptionManage, &client.EncryptionSpec{TenantKey: key})
		},
	}
	tenantKeyFlag(cmd, &keyFile, "the tenant key, in this file (- reads stdin)")
	return cmd
}

func encryptionRevokeCmd(api *Conn) *cobra.Command {
	var confirm bool
	cmd := &cobra.Command{
		Use:   "revoke --confirm",
		Short: "Revoke the tenant key: everything sealed under it is unreadable, for good",
		Long: `revoke deletes the tenant key and the namespace's keys it wraps. Every value
the namespace sealed under them is unreadable from then on, by anyone, the
operator included (reads answer 409 encryption_key_revoked), and so are
enqueues until rotate gives a new key. Other namespaces are untouched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !confirm {
				return errors.New("revoking makes everything sealed under the tenant key unreadable, for good: add --confirm")
			}
			return callEncryption(cmd, api, tenancy.ActEncryptionManage, &client.EncryptionSpec{RevokeTenantKey: true})
		},
	}
	cmd.Flags().BoolVar(&confirm, "confirm", false, "yes, make what the key sealed unreadable")
	return cmd
}

func tenantKeyFlag(cmd *cobra.Command, file *string, usage string) {
	cmd.Flags().StringVar(file, "tenant-key-file", "", usage)
}

// readTenantKey reads the key from path, or stdin for "-".
func readTenantKey(cmd *cobra.Command, path string) (string, error) {
	return readSecretFrom(cmd, "--tenant-key-file", path)
}

// callEncryption reads the settings, or changes them by spec, and prints
// them as the API then holds them (-o json: the API's answer).
func callEncryption(cmd *cobra.Command, api *Conn, act tenancy.Action, spec *client.EncryptionSpec) error {
	ns := api.Namespace()
	return runAPI(cmd, api, "encryption", act,
		func(ctx context.Context, c *client.Client) (*client.Encryption, error) {
			if spec == nil {
				return c.GetEncryption(ctx)
			}
			return c.SetEncryption(ctx, *spec)
		},
		func(w io.Writer, e *client.Encryption) error {
			tw := newTable(w)
			if ns != "" {
				fmt.Fprintf(tw, "NAMESPACE\t%s\n", ns)
			}
			keyID := "none"
			if e.TenantKeyID != nil {
				keyID = *e.TenantKeyID
			}
			fmt.Fprintf(tw, "ENABLED\t%t\nSEARCH DECRYPT\t%t\nKEY SOURCE\t%s\nTENANT KEY ID\t%s\nGENERATION\t%d\n",
				e.Enabled, e.SearchDecrypt, e.KeySource, keyID, e.Generation)
			revoked := make([]string, 0, len(e.RevokedKeys))
			for _, k := range e.RevokedKeys {
				revoked = append(revoked, fmt.Sprintf("%s (generation %d, %s)", k.KeyID, k.Generation, stamp(&k.RevokedAt)))
			}
			fmt.Fprintf(tw, "REVOKED KEYS\t%s\nUPDATED\t%s\n", orDash(strings.Join(revoked, ", ")), stamp(e.UpdatedAt))
			return tw.Flush()
		})
}

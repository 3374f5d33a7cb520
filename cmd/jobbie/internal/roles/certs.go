package roles

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/internal/pki"
)

func certsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "certs",
		Short: "The deployment's internal CA and the certificates of its processes",
		Long: `Every Jobbie process proves who it is to the others with a certificate
from the deployment's internal CA, naming its role, shard and node
(jobbie://shard/s1/n1, jobbie://gateway/-/gw1 …). Every internal channel is
mutual TLS between such certificates. ` + "`jobbie dev`" + ` makes its own CA in its
data directory; a production deployment makes one with ` + "`jobbie certs ca`" + `,
keeps ca.key offline, and issues each process its certificate:

  jobbie certs ca --dir ./pki
  jobbie certs issue --ca-dir ./pki --role shard --shard s1 --node n1 --host 10.0.0.5 --out ./n1
  jobbie certs issue --ca-dir ./pki --role gateway --node gw1 --out ./gw1
  jobbie certs issue --ca-dir ./pki --role operator --node alice --out ./alice

Each process then runs with --tls-cert n1.crt --tls-key n1.key --tls-ca pki/ca.crt.

A node of a tenant's self-hosted shard cluster names the tenant that owns
it (jobbie://shard/acme-1/n1?tenant=t_…), so the hosted side admits it for
that tenant only. Its key can stay on its host: the node makes a request,
the CA's holder signs it for the identity they decide:

  jobbie certs issue --ca-dir ./pki --role shard --shard acme-1 --node n1 --tenant t_… --out ./n1
  jobbie certs request --role shard --shard acme-1 --node n1 --tenant t_… --out ./n1   (on the node: n1.key, n1.csr)
  jobbie certs sign --ca-dir ./pki --csr n1.csr --role shard --shard acme-1 --node n1 --tenant t_… --out ./n1`,
	}
	cmd.AddCommand(certsCACmd(), certsIssueCmd(), certsRequestCmd(), certsSignCmd())
	return cmd
}

func certsCACmd() *cobra.Command {
	var dir, name string
	cmd := &cobra.Command{
		Use:   "ca",
		Short: "Create a new internal CA (ca.crt and ca.key) in a directory",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return makeCA(cmd.OutOrStdout(), dir, name)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "directory for ca.crt and ca.key (created if missing)")
	cmd.Flags().StringVar(&name, "name", "jobbie internal ca", "the CA's name")
	_ = cmd.MarkFlagRequired("dir")
	return cmd
}

// makeCA writes a new CA into dir, refusing to replace one: every
// certificate it issued would stop being trusted.
func makeCA(out io.Writer, dir, name string) error {
	certFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	for _, f := range []string{certFile, keyFile} {
		if _, err := os.Stat(f); err == nil {
			return fmt.Errorf("%s exists; a new CA would invalidate every certificate issued from it", f)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := pki.NewCA(name)
	if err != nil {
		return err
	}
	if err := ca.WriteFiles(certFile, keyFile); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s and %s (keep the key offline)\n", certFile, keyFile)
	return nil
}

// identityFlags are the flags that name a process's identity, shared by
// issue, request and sign.
type identityFlags struct{ role, shard, node, tenant string }

func (f *identityFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.role, "role", "", "control, gateway, shard, operator or metrics (a scraper)")
	fl.StringVar(&f.shard, "shard", "", "the shard cluster (role shard only)")
	fl.StringVar(&f.node, "node", "", "the node id (or operator name)")
	fl.StringVar(&f.tenant, "tenant", "", "the tenant id owning a self-hosted shard cluster (role shard only)")
	_ = cmd.MarkFlagRequired("role")
	_ = cmd.MarkFlagRequired("node")
}

func (f *identityFlags) identity() (pki.Identity, error) {
	id := pki.Identity{Role: pki.Role(f.role), Shard: f.shard, Node: f.node, Tenant: f.tenant}
	return id, id.Validate()
}

func certsIssueCmd() *cobra.Command {
	var (
		idf        identityFlags
		caDir, out string
		hosts      []string
		validFor   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "issue",
		Short: "Issue a process its certificate and key (<out>.crt, <out>.key)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := idf.identity()
			if err != nil {
				return err
			}
			ca, err := pki.LoadCA(filepath.Join(caDir, "ca.crt"), filepath.Join(caDir, "ca.key"))
			if err != nil {
				return err
			}
			return issueFiles(cmd.OutOrStdout(), ca, id, hosts, validFor, out)
		},
	}
	idf.add(cmd)
	f := cmd.Flags()
	f.StringVar(&caDir, "ca-dir", "", "directory holding ca.crt and ca.key")
	f.StringSliceVar(&hosts, "host", nil, "a host name or IP the certificate also names, for tools that check names (repeatable)")
	f.DurationVar(&validFor, "valid-for", pki.DefaultValidity, "how long the certificate lasts")
	f.StringVar(&out, "out", "", "path prefix of the files to write (default: the node id)")
	_ = cmd.MarkFlagRequired("ca-dir")
	return cmd
}

func certsRequestCmd() *cobra.Command {
	var (
		idf   identityFlags
		out   string
		hosts []string
	)
	cmd := &cobra.Command{
		Use:   "request",
		Short: "Make a key and a certificate request for this process (<out>.key, <out>.csr); the key stays here",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := idf.identity()
			if err != nil {
				return err
			}
			if out == "" {
				out = id.Node
			}
			if err := refuseExisting(out+".key", out+".csr"); err != nil {
				return err
			}
			csrPEM, keyPEM, err := pki.NewCSR(id, hosts)
			if err != nil {
				return err
			}
			if err := os.WriteFile(out+".key", keyPEM, 0o600); err != nil {
				return err
			}
			if err := os.WriteFile(out+".csr", csrPEM, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s.key (keep it here) and %s.csr for %s: have the CA's holder sign the request\n", out, out, id)
			return nil
		},
	}
	idf.add(cmd)
	f := cmd.Flags()
	f.StringSliceVar(&hosts, "host", nil, "a host name or IP to ask for, for tools that check names (repeatable)")
	f.StringVar(&out, "out", "", "path prefix of the files to write (default: the node id)")
	return cmd
}

func certsSignCmd() *cobra.Command {
	var (
		idf                 identityFlags
		caDir, csrFile, out string
		hosts               []string
		validFor            time.Duration
	)
	cmd := &cobra.Command{
		Use:   "sign",
		Short: "Sign a certificate request for the identity given here (<out>.crt); a request asking for another is refused",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := idf.identity()
			if err != nil {
				return err
			}
			if validFor <= 0 {
				return errors.New("--valid-for must be positive")
			}
			csrPEM, err := os.ReadFile(csrFile)
			if err != nil {
				return err
			}
			ca, err := pki.LoadCA(filepath.Join(caDir, "ca.crt"), filepath.Join(caDir, "ca.key"))
			if err != nil {
				return err
			}
			certPEM, err := ca.IssueCSR(csrPEM, id, hosts, validFor)
			if err != nil {
				return err
			}
			if out == "" {
				out = id.Node
			}
			if err := os.WriteFile(out+".crt", certPEM, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s.crt for %s, valid until %s\n", out, id, time.Now().Add(validFor).UTC().Format(time.RFC3339))
			return nil
		},
	}
	idf.add(cmd)
	f := cmd.Flags()
	f.StringVar(&caDir, "ca-dir", "", "directory holding ca.crt and ca.key")
	f.StringVar(&csrFile, "csr", "", "the certificate request (from jobbie certs request)")
	f.StringSliceVar(&hosts, "host", nil, "a host name or IP the certificate names; the request may ask only for these (repeatable)")
	f.DurationVar(&validFor, "valid-for", pki.DefaultValidity, "how long the certificate lasts")
	f.StringVar(&out, "out", "", "path prefix of the certificate to write (default: the node id)")
	_ = cmd.MarkFlagRequired("ca-dir")
	_ = cmd.MarkFlagRequired("csr")
	return cmd
}

// refuseExisting keeps a key from being replaced: the certificate issued
// for it would stop matching.
func refuseExisting(files ...string) error {
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			return fmt.Errorf("%s exists; remove it first if a new key is meant", f)
		}
	}
	return nil
}

// issueFiles writes <out>.crt and <out>.key (owner-only).
func issueFiles(w io.Writer, ca *pki.CA, id pki.Identity, hosts []string, validFor time.Duration, out string) error {
	if out == "" {
		out = id.Node
	}
	if validFor <= 0 {
		return errors.New("--valid-for must be positive")
	}
	certPEM, keyPEM, err := ca.Issue(id, hosts, validFor)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out+".key", keyPEM, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(out+".crt", certPEM, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s.crt and %s.key for %s, valid until %s\n", out, out, id, time.Now().Add(validFor).UTC().Format(time.RFC3339))
	return nil
}

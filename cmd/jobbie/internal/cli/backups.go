package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
)

// backupsCmd is `jobbie backups`: the tenant's namespace backups through
// the gateway.
func backupsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backups",
		Short: "Take, list, download and restore namespace backups, and set backup policies",
		Long: `backups manages the backups of the key's namespaces. A backup is a
consistent snapshot of one namespace (jobs in every state, queues,
schedules, batches, locks), taken by the control plane from the
namespace's shard and kept in its backup store.

  jobbie backups create --namespace orders
  jobbie backups list --namespace orders
  jobbie backups download bkp_01… > orders.jbk
  jobbie backups restore bkp_01… --target-namespace orders-copy
  jobbie backups restore bkp_01… --replace
  jobbie backups policy set --namespace orders --cron '0 3 * * *' --timezone Europe/Paris --retention 7

create and restore answer at once; get shows when they end (--wait waits).`,
	}
	api := addConn(cmd, gatewayAPI)
	cmd.AddCommand(backupsListCmd(api), backupsCreateCmd(api), backupsGetCmd(api), backupsDeleteCmd(api),
		backupsDownloadCmd(api), backupsRestoreCmd(api), backupsPolicyCmd(api))
	return cmd
}

func backupsListCmd(api *Conn) *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List backups, newest first (only --namespace's when given)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			list, err := c.ListBackups(cmd.Context(), api.Namespace())
			if err != nil {
				return apiError(err)
			}
			if api.json() {
				return writeJSON(cmd.OutOrStdout(), list) // an array, whatever its length
			}
			return printBackups(cmd.OutOrStdout(), api, list...)
		},
	}
}

func backupsCreateCmd(api *Conn) *cobra.Command {
	var wait bool
	cmd := &cobra.Command{
		Use: "create", Short: "Back up --namespace (or the key's default namespace)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			ns, err := api.keyNamespace()
			if err != nil {
				return err
			}
			b, err := c.CreateBackup(cmd.Context(), ns)
			if err != nil {
				return apiError(err)
			}
			if wait {
				if b, err = waitBackup(cmd, c, b.ID, func(b *client.Backup) bool { return b.State != "running" }); err != nil {
					return err
				}
			}
			return printBackups(cmd.OutOrStdout(), api, *b)
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the backup has completed or failed")
	return cmd
}

func backupsGetCmd(api *Conn) *cobra.Command {
	return &cobra.Command{
		Use: "get ID", Short: "Show a backup and its latest restore", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			b, err := c.GetBackup(cmd.Context(), args[0])
			if err != nil {
				return apiError(err)
			}
			return printBackups(cmd.OutOrStdout(), api, *b)
		},
	}
}

func backupsDeleteCmd(api *Conn) *cobra.Command {
	return &cobra.Command{
		Use: "delete ID", Short: "Delete a backup", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			if err := c.DeleteBackup(cmd.Context(), args[0]); err != nil {
				return apiError(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "deleted %s\n", args[0])
			return nil
		},
	}
}

func backupsDownloadCmd(api *Conn) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use: "download ID", Short: "Write a backup's stream to --out (or stdout)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if out != "" {
				f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			} else if f, ok := w.(*os.File); ok && f.Name() != os.DevNull && isCharDevice(f) {
				return errors.New("the backup is binary: give --out FILE or redirect stdout")
			}
			n, err := c.DownloadBackup(cmd.Context(), args[0], w)
			if err != nil {
				if out != "" {
					_ = os.Remove(out)
				}
				return apiError(err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%d bytes\n", n)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "file to write (it must not exist)")
	return cmd
}

func backupsRestoreCmd(api *Conn) *cobra.Command {
	var (
		req  client.RestoreRequest
		wait bool
	)
	cmd := &cobra.Command{
		Use:   "restore ID",
		Short: "Restore a backup into a new namespace (--target-namespace) or over its own (--replace)",
		Long: `restore restores a completed backup. --target-namespace creates that
namespace and restores into it; --replace restores over the backup's own
namespace, after an automatic backup (kind pre_restore) of what it
replaces, so the restore can be undone by restoring that one.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			b, err := c.RestoreBackup(cmd.Context(), args[0], req)
			if err != nil {
				return apiError(err)
			}
			if wait {
				id := b.LastRestore.ID
				if b, err = waitBackup(cmd, c, b.ID, func(b *client.Backup) bool {
					return b.LastRestore == nil || b.LastRestore.ID != id || b.LastRestore.State != "running"
				}); err != nil {
					return err
				}
			}
			return printBackups(cmd.OutOrStdout(), api, *b)
		},
	}
	cmd.Flags().StringVar(&req.TargetNamespace, "target-namespace", "", "restore into this new namespace")
	cmd.Flags().BoolVar(&req.Replace, "replace", false, "restore over the backup's own namespace (backed up first)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the restore has completed or failed")
	return cmd
}

// waitBackup polls a backup until done holds.
func waitBackup(cmd *cobra.Command, c *client.Client, id string, done func(*client.Backup) bool) (*client.Backup, error) {
	for {
		b, err := c.GetBackup(cmd.Context(), id)
		if err != nil {
			return nil, apiError(err)
		}
		if done(b) {
			return b, nil
		}
		select {
		case <-cmd.Context().Done():
			return nil, cmd.Context().Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func printBackups(w io.Writer, api *Conn, list ...client.Backup) error {
	if api.json() && len(list) == 1 {
		return writeJSON(w, list[0])
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAMESPACE\tKIND\tSTATE\tCREATED\tSIZE\tJOBS\tRESTORE\tERROR")
	for _, b := range list {
		restore := "-"
		if r := b.LastRestore; r != nil {
			restore = fmt.Sprintf("%s %s→%s", r.State, r.Mode, r.TargetNamespace)
			if r.Error != "" {
				restore += ": " + oneLine(r.Error, 60)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", b.ID, b.Namespace, b.Kind, b.State,
			b.CreatedAt.UTC().Format(time.RFC3339), b.Size, b.Jobs, restore, orDash(oneLine(b.Error, 80)))
	}
	return tw.Flush()
}

func backupsPolicyCmd(api *Conn) *cobra.Command {
	cmd := &cobra.Command{Use: "policy", Short: "Show, set or delete --namespace's backup policy"}
	// with runs call with the client and the namespace the flags name.
	with := func(call func(c *client.Client, ns string) error) error {
		ns := api.Namespace()
		if ns == "" {
			return errors.New("--namespace is required")
		}
		c, err := api.client()
		if err != nil {
			return err
		}
		return call(c, ns)
	}
	show := func(w io.Writer, p *client.BackupPolicy) error {
		if api.json() {
			return writeJSON(w, p)
		}
		next := "-"
		if p.NextRunAt != nil {
			next = p.NextRunAt.UTC().Format(time.RFC3339)
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAMESPACE\tCRON\tTIMEZONE\tRETENTION\tENABLED\tNEXT RUN")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%t\t%s\n", p.Namespace, p.Cron, p.Timezone, p.Retention, p.Enabled, next)
		return tw.Flush()
	}
	get := &cobra.Command{
		Use: "get", Short: "Show the policy", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return with(func(c *client.Client, ns string) error {
				p, err := c.GetBackupPolicy(cmd.Context(), ns)
				if err != nil {
					return apiError(err)
				}
				return show(cmd.OutOrStdout(), p)
			})
		},
	}
	var (
		req      client.BackupPolicyRequest
		disabled bool
	)
	set := &cobra.Command{
		Use: "set", Short: "Set the policy: --cron, --timezone, --retention", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return with(func(c *client.Client, ns string) error {
				enabled := !disabled
				req.Enabled = &enabled
				p, err := c.PutBackupPolicy(cmd.Context(), ns, req)
				if err != nil {
					return apiError(err)
				}
				return show(cmd.OutOrStdout(), p)
			})
		},
	}
	set.Flags().StringVar(&req.Cron, "cron", "", "cron expression (5 fields, or @daily, @every 6h…)")
	set.Flags().StringVar(&req.Timezone, "timezone", "", "IANA time zone of the cron (default UTC)")
	set.Flags().IntVar(&req.Retention, "retention", 7, "scheduled backups kept (1-1000); manual and pre_restore ones are never pruned")
	set.Flags().BoolVar(&disabled, "disabled", false, "keep the policy but run nothing")
	del := &cobra.Command{
		Use: "delete", Short: "Delete the policy (its backups stay)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return with(func(c *client.Client, ns string) error {
				if err := c.DeleteBackupPolicy(cmd.Context(), ns); err != nil {
					return apiError(err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "deleted the backup policy of %s\n", ns)
				return nil
			})
		},
	}
	cmd.AddCommand(get, set, del)
	return cmd
}

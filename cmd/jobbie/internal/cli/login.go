package cli

import (
	"fmt"
	"io"
	"net/url"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// `jobbie login` checks a gateway's key and saves it as a context;
// `jobbie context list|use|current|delete` manage them (config.go).

func loginCmd() *cobra.Command {
	var cx Context
	cmd := &cobra.Command{
		Use:   "login --url <gateway> --key-file <file>",
		Short: "Check a gateway's key and save it as a context, the current one",
		Long: `login checks the key against the gateway, then saves the URL, key file (or
key), namespace and CA file as a context in the config file
($XDG_CONFIG_HOME/jobbie/config.yaml, or ~/.config/jobbie/config.yaml) and
makes it the current one. The gateway's commands then need no flags; their
flags and environment variables still win over the context.

  jobbie login --url https://jobbie.example.com --key-file ~/.jobbie/prod.key --name prod
  jobbie login --url http://127.0.0.1:8080 --key-file jobbie-data/owner.key --namespace emails --name dev`,
		Args: cobra.NoArgs,
	}
	f := cmd.Flags()
	f.StringVar(&cx.URL, "url", "", "the gateway's URL (http or https)")
	f.StringVar(&cx.KeyFile, "key-file", "", "the file that holds the API key (saved as its path)")
	f.StringVar(&cx.Key, "key", "", "the API key itself (saved in the config file; --key-file keeps it out)")
	f.StringVar(&cx.Namespace, "namespace", "", "namespace instead of the key's default")
	f.StringVar(&cx.CAFile, "ca-file", "", "trust this PEM CA certificate for the gateway's TLS (a private CA)")
	f.StringVar(&cx.Name, "name", "", "the context's name (default: the URL's host and port)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		key, err := checkLogin(&cx)
		if err != nil {
			return err
		}
		cfg, path, err := loadConfig()
		if err != nil {
			return err
		}
		// Check the key before anything is written.
		opts := []client.Option{client.WithUserAgent("jobbie-cli")}
		if cx.Namespace != "" {
			opts = append(opts, client.WithNamespace(cx.Namespace))
		}
		if cx.CAFile != "" {
			hc, err := tlsClient("--ca-file", cx.CAFile)
			if err != nil {
				return err
			}
			opts = append(opts, client.WithHTTPClient(hc))
		}
		c := client.New(cx.URL, key, opts...)
		defer c.CloseIdleConnections()
		if _, err := c.ListQueues(cmd.Context()); err != nil && !client.IsForbidden(err) {
			// A 403 is a key that is good but may not list queues: still a login.
			return fmt.Errorf("login to %s: %w", cx.URL, apiError(err))
		}
		cfg.put(cx)
		cfg.CurrentContext = cx.Name
		if err := cfg.save(path); err != nil {
			return err
		}
		ns := cx.Namespace
		if ns == "" {
			ns = "the key's default"
		}
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "logged in to %s: context %q (namespace %s) is current, in %s\n", cx.URL, cx.Name, ns, path)
		return err
	}
	return cmd
}

// checkLogin refuses login's bad flags before any request, and returns
// the key to check.
func checkLogin(cx *Context) (string, error) {
	u, err := url.Parse(cx.URL)
	switch {
	case cx.URL == "":
		return "", fmt.Errorf("--url is required: the gateway's URL")
	case err != nil:
		return "", fmt.Errorf("--url: %w", err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return "", fmt.Errorf("--url %q: want http:// or https:// and a host", cx.URL)
	}
	if cx.Name == "" {
		cx.Name = u.Host
	}
	if err := checkContextName(cx.Name); err != nil {
		return "", fmt.Errorf("--name: %w", err)
	}
	if cx.Namespace != "" {
		if err := tenancy.ValidateNamespace(cx.Namespace); err != nil {
			return "", fmt.Errorf("--namespace: %w", err)
		}
	}
	if cx.CAFile != "" {
		abs, err := filepath.Abs(cx.CAFile)
		if err != nil {
			return "", fmt.Errorf("--ca-file: %w", err)
		}
		if _, err := readCA("--ca-file", abs); err != nil {
			return "", err
		}
		cx.CAFile = abs
	}
	switch {
	case cx.Key != "" && cx.KeyFile != "":
		return "", fmt.Errorf("give --key or --key-file, not both")
	case cx.Key != "":
		return cx.Key, nil
	case cx.KeyFile == "":
		return "", fmt.Errorf("--key-file is required (or --key): the API key to log in with")
	}
	abs, err := filepath.Abs(cx.KeyFile)
	if err != nil {
		return "", fmt.Errorf("--key-file: %w", err)
	}
	cx.KeyFile = abs // the context works from any directory
	return readKeyFile("--key-file", abs)
}

func contextCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "context",
		Short: "List, use, show or delete the config file's contexts (jobbie login makes them)",
		Long: `context manages the config file's contexts, which ` + "`jobbie login`" + ` makes:

  jobbie context list           (the current one marked *)
  jobbie context use prod       (make prod current)
  jobbie context current
  jobbie context delete dev

A gateway's command uses the current context, or --context's (or
$JOBBIE_CONTEXT's), beneath its flags and environment variables.`,
		Args: cobra.NoArgs,
	}
	cmd.PersistentFlags().StringVarP(&output, "output", "o", OutTable, OutputHelp)
	checkOut := func() error {
		return CheckOutput(output)
	}
	print := func(w io.Writer, cfg *Config, cxs []Context) error {
		if output != OutTable {
			return writeJSON(w, cxs)
		}
		tw := newTable(w)
		fmt.Fprintln(tw, "CURRENT\tNAME\tURL\tNAMESPACE\tKEY\tCA FILE")
		for _, cx := range cxs {
			cur, key := "", cx.KeyFile
			if cx.Name == cfg.CurrentContext {
				cur = "*"
			}
			if cx.Key != "" {
				key = "(in the config file)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cur, cx.Name, cx.URL, orDash(cx.Namespace), orDash(key), orDash(cx.CAFile))
		}
		return tw.Flush()
	}
	list := &cobra.Command{
		Use: "list", Aliases: []string{"ls"}, Short: "List the contexts", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOut(); err != nil {
				return err
			}
			cfg, _, err := loadConfig()
			if err != nil {
				return err
			}
			cxs := cfg.Contexts
			if cxs == nil {
				cxs = []Context{}
			}
			return print(cmd.OutOrStdout(), cfg, cxs)
		},
	}
	current := &cobra.Command{
		Use: "current", Short: "Show the current context", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOut(); err != nil {
				return err
			}
			cx, err := selectedContext("", "")
			if err != nil {
				return err
			}
			if cx == nil {
				return fmt.Errorf("no current context: `jobbie login` or `jobbie context use <name>` sets one")
			}
			cfg, _, err := loadConfig()
			if err != nil {
				return err
			}
			if output != OutTable {
				return writeJSON(cmd.OutOrStdout(), cx)
			}
			return print(cmd.OutOrStdout(), cfg, []Context{*cx})
		},
	}
	// edit changes the named context's entry and saves the file.
	edit := func(use, short, done string, change func(cfg *Config, name string)) *cobra.Command {
		return &cobra.Command{
			Use: use + " <name>", Short: short, Args: exactArgs(1),
			// The shells complete a context's name from the config file.
			ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
				cfg, _, err := loadConfig()
				if err != nil || len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				var names []string
				for _, cx := range cfg.Contexts {
					names = append(names, cx.Name)
				}
				return names, cobra.ShellCompDirectiveNoFileComp
			},
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := checkContextName(args[0]); err != nil {
					return err
				}
				cfg, path, err := loadConfig()
				if err != nil {
					return err
				}
				if cfg.find(args[0]) == nil {
					return fmt.Errorf("no context %q in %s (%s)", args[0], path, cfg.names())
				}
				change(cfg, args[0])
				if err := cfg.save(path); err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "context %q %s\n", args[0], done)
				return err
			},
		}
	}
	cmd.AddCommand(list, current,
		edit("use", "Make a context the current one", "is current",
			func(cfg *Config, name string) { cfg.CurrentContext = name }),
		edit("delete", "Delete a context (its key file stays)", "deleted",
			func(cfg *Config, name string) { cfg.remove(name) }))
	return cmd
}

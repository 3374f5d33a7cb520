package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
)

// Environment variables the API commands read when the matching flag is
// not given.
const (
	envURL       = "JOBBIE_URL"
	envKey       = "JOBBIE_KEY"
	envKeyFile   = "JOBBIE_KEY_FILE"
	envNamespace = "JOBBIE_NAMESPACE"
	defaultURL   = "http://127.0.0.1:8080"
)

// Output formats of the API commands.
const (
	outTable = "table"
	outJSON  = "json"
)

// apiFlags are the flags every command that talks to a gateway shares.
// Defaults come from the environment at run time, not at flag definition,
// so --help never prints a key.
type apiFlags struct {
	url, key, keyFile, namespace, output string
	cmd                                  *cobra.Command
}

// addAPIFlags registers the gateway flags on cmd, as persistent flags so
// its subcommands have them too.
func addAPIFlags(cmd *cobra.Command) *apiFlags {
	a := &apiFlags{cmd: cmd}
	f := cmd.PersistentFlags()
	f.StringVar(&a.url, "url", defaultURL, "gateway URL ($"+envURL+")")
	f.StringVar(&a.key, "key", "", "API key ($"+envKey+")")
	f.StringVar(&a.keyFile, "key-file", "", "read the API key from this file ($"+envKeyFile+")")
	f.StringVar(&a.namespace, "namespace", "", "namespace instead of the key's default ($"+envNamespace+")")
	f.StringVarP(&a.output, "output", "o", outTable, "output format: table or json")
	return a
}

// flagOrEnv is the flag's value when given, else the variable's when set,
// else the flag's default.
func (a *apiFlags) flagOrEnv(name, env, val string) string {
	if a.cmd.PersistentFlags().Changed(name) {
		return val
	}
	if v := os.Getenv(env); v != "" {
		return v
	}
	return val
}

// client builds the API client from the flags and environment; a flag
// beats a variable, and a key beats a key file of the same rank.
func (a *apiFlags) client() (*client.Client, error) {
	if a.output != outTable && a.output != outJSON {
		return nil, fmt.Errorf("--output must be %s or %s, not %q", outTable, outJSON, a.output)
	}
	key, err := a.apiKey()
	if err != nil {
		return nil, err
	}
	opts := []client.Option{client.WithUserAgent("jobbie-cli")}
	if ns := a.flagOrEnv("namespace", envNamespace, a.namespace); ns != "" {
		opts = append(opts, client.WithNamespace(ns))
	}
	return client.New(a.flagOrEnv("url", envURL, a.url), key, opts...), nil
}

func (a *apiFlags) apiKey() (string, error) {
	// The persistent flag set holds the flags themselves, which a
	// subcommand's parse marks as changed.
	flags := a.cmd.PersistentFlags()
	switch {
	case flags.Changed("key") && flags.Changed("key-file"):
		return "", errors.New("give --key or --key-file, not both")
	case flags.Changed("key") && a.key != "":
		return a.key, nil
	case flags.Changed("key-file"):
		return readKeyFile("--key-file", a.keyFile)
	case os.Getenv(envKey) != "":
		return os.Getenv(envKey), nil
	case os.Getenv(envKeyFile) != "":
		return readKeyFile("$"+envKeyFile, os.Getenv(envKeyFile))
	}
	return "", fmt.Errorf("no API key: pass --key or --key-file, or set $%s or $%s", envKey, envKeyFile)
}

func readKeyFile(from, path string) (string, error) {
	key, err := readSecretFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", from, err)
	}
	return key, nil
}

func (a *apiFlags) json() bool { return a.output == outJSON }

// apiError words an SDK error for a terminal: without the SDK's "jobbie:"
// prefix (main adds its own), with a hint where the fix is local. The
// error stays unwrappable.
func apiError(err error) error {
	msg, ok := strings.CutPrefix(err.Error(), "jobbie: ")
	if client.IsUnauthenticated(err) {
		msg += " (check --key, --key-file, $" + envKey + " or $" + envKeyFile + ")"
	} else if !ok {
		return err
	}
	return &wordedError{msg: msg, err: err}
}

type wordedError struct {
	msg string
	err error
}

func (e *wordedError) Error() string { return e.msg }
func (e *wordedError) Unwrap() error { return e.err }

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// isCharDevice reports whether r is a character device: a terminal, where
// reading ids would wait for typing instead of failing, or /dev/null.
func isCharDevice(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// orDash shows an empty cell as "-" so columns stay whitespace-separated.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine flattens s into one cell of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

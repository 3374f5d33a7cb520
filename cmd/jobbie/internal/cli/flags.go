package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/client"
)

// Every command that calls Jobbie takes the same flags: --url, --key or
// --key-file, and -o table|json; a gateway's commands also --namespace,
// the control plane's also --ca. Each API reads its own environment
// variables where a flag is not given, so one shell can hold a gateway's
// and a control plane's settings at once. A flag beats a variable, and a
// key beats a key file of the same rank. Defaults come from the
// environment at run time, not at flag definition, so --help never prints
// a key.

// Output formats of the commands.
const (
	OutTable = "table"
	OutJSON  = "json"
)

// An endpoint is one of Jobbie's APIs a command calls, and how its
// flags and variables are named.
type endpoint struct {
	name, defaultURL, urlEnv    string
	keyNoun, keyEnv, keyFileEnv string
	defaultKeyFile              string
	namespaceEnv                string // "" for no --namespace
	caEnv, defaultCA, caHelp    string // "" for no --ca
	// aliases are earlier spellings of its flags, still taken but not
	// shown: alias → flag.
	aliases map[string]string
}

var (
	// gatewayAPI is the public API, called with an API key.
	gatewayAPI = &endpoint{name: "gateway", defaultURL: "http://127.0.0.1:8080", urlEnv: "JOBBIE_URL",
		keyNoun: "API key", keyEnv: "JOBBIE_KEY", keyFileEnv: "JOBBIE_KEY_FILE", namespaceEnv: "JOBBIE_NAMESPACE"}
	// controlAPI is the control plane's operator API, called with the
	// operator key over TLS to the deployment's CA. Its flags were once
	// --control and --operator-key-file, which it still takes.
	controlAPI = &endpoint{name: "control plane", defaultURL: "https://127.0.0.1:8081", urlEnv: "JOBBIE_CONTROL_URL",
		keyNoun: "operator key", keyEnv: "JOBBIE_OPERATOR_KEY", keyFileEnv: "JOBBIE_OPERATOR_KEY_FILE",
		defaultKeyFile: "jobbie-data/operator.key",
		caEnv:          "JOBBIE_CA", defaultCA: "jobbie-data/pki/ca.crt", caHelp: "the deployment CA's certificate, which control's is signed by",
		aliases: map[string]string{"control": "url", "operator-key-file": "key-file"}}
)

// Conn is a command's flags for calling an API.
type Conn struct {
	ep                                       *endpoint
	url, key, keyFile, namespace, ca, output string
	fs                                       *pflag.FlagSet // where the flags are, to ask which were given
}

// addConn registers ep's flags and -o on cmd, as persistent flags so
// its subcommands have them too.
func addConn(cmd *cobra.Command, ep *endpoint) *Conn {
	c := newConn(ep, cmd.PersistentFlags())
	c.fs.StringVarP(&c.output, "output", "o", OutTable, "output format: table or json")
	return c
}

// GatewayFlags registers the gateway's flags, without -o, on cmd's own
// flags: for a command that calls the gateway outside the CLI (jobbie
// bench), read as the CLI reads them (Target).
func GatewayFlags(cmd *cobra.Command) *Conn { return newConn(gatewayAPI, cmd.Flags()) }

func newConn(ep *endpoint, f *pflag.FlagSet) *Conn {
	c := &Conn{ep: ep, fs: f}
	f.StringVar(&c.url, "url", ep.defaultURL, ep.name+" URL ($"+ep.urlEnv+")")
	f.StringVar(&c.key, "key", "", ep.keyNoun+" ($"+ep.keyEnv+")")
	f.StringVar(&c.keyFile, "key-file", ep.defaultKeyFile, "read the "+ep.keyNoun+" from this file ($"+ep.keyFileEnv+")")
	if ep.namespaceEnv != "" {
		f.StringVar(&c.namespace, "namespace", "", "namespace instead of the key's default ($"+ep.namespaceEnv+")")
	}
	if ep.caEnv != "" {
		f.StringVar(&c.ca, "ca", ep.defaultCA, ep.caHelp+" ($"+ep.caEnv+")")
	}
	values := map[string]*string{"url": &c.url, "key-file": &c.keyFile}
	for alias, name := range ep.aliases {
		fl := f.Lookup(name)
		f.StringVar(values[name], alias, fl.DefValue, fl.Usage)
		_ = f.MarkHidden(alias)
	}
	return c
}

// given is the spelling of flag name the command line gave ("" when it
// gave none): the name, or an alias of it.
func (c *Conn) given(name string) string {
	if c.fs.Changed(name) {
		return "--" + name
	}
	for alias, n := range c.ep.aliases {
		if n == name && c.fs.Changed(alias) {
			return "--" + alias
		}
	}
	return ""
}

// value is the flag's value when given, else the variable's when set,
// else the flag's default.
func (c *Conn) value(name, env, val string) string {
	if c.given(name) != "" {
		return val
	}
	if v := os.Getenv(env); v != "" {
		return v
	}
	return val
}

// Namespace is the namespace the flags or environment name; "" for the
// key's default.
func (c *Conn) Namespace() string { return c.value("namespace", c.ep.namespaceEnv, c.namespace) }

// Target is the URL, key and namespace the flags and environment name.
// The key is "" when none is named.
func (c *Conn) Target() (url, key, namespace string, err error) {
	key, err = c.apiKey()
	if errors.Is(err, errNoKey) {
		key, err = "", nil
	}
	if err != nil {
		return "", "", "", err
	}
	return c.value("url", c.ep.urlEnv, c.url), key, c.Namespace(), nil
}

// client builds the API client from the flags and environment.
func (c *Conn) client() (*client.Client, error) {
	if c.output != OutTable && c.output != OutJSON {
		return nil, fmt.Errorf("--output must be %s or %s, not %q", OutTable, OutJSON, c.output)
	}
	key, err := c.apiKey()
	if err != nil {
		return nil, err
	}
	opts := []client.Option{client.WithUserAgent("jobbie-cli")}
	if c.ep.caEnv != "" {
		hc, err := c.tlsClient()
		if err != nil {
			return nil, err
		}
		opts = append(opts, client.WithHTTPClient(hc))
	}
	if ns := c.Namespace(); ns != "" {
		opts = append(opts, client.WithNamespace(ns))
	}
	return client.New(c.value("url", c.ep.urlEnv, c.url), key, opts...), nil
}

// errNoKey says the flags and environment name neither a key nor a key
// file.
var errNoKey = errors.New("no key")

func (c *Conn) apiKey() (string, error) {
	a := c.ep
	keyFlag, fileFlag := c.given("key"), c.given("key-file")
	switch {
	case keyFlag != "" && fileFlag != "":
		return "", fmt.Errorf("give %s or %s, not both", keyFlag, fileFlag)
	case keyFlag != "" && c.key != "":
		return c.key, nil
	case fileFlag != "":
		return readKeyFile(fileFlag, c.keyFile)
	case os.Getenv(a.keyEnv) != "":
		return os.Getenv(a.keyEnv), nil
	case os.Getenv(a.keyFileEnv) != "":
		return readKeyFile("$"+a.keyFileEnv, os.Getenv(a.keyFileEnv))
	case c.keyFile != "":
		return readKeyFile("--key-file", c.keyFile)
	}
	return "", &wordedError{msg: fmt.Sprintf("no %s: pass --key or --key-file, or set $%s or $%s", a.keyNoun, a.keyEnv, a.keyFileEnv), err: errNoKey}
}

// tlsClient trusts the --ca certificate alone, as the control plane's
// certificate is the deployment CA's.
func (c *Conn) tlsClient() (*http.Client, error) {
	caFile := c.value("ca", c.ep.caEnv, c.ca)
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("--ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--ca: %s holds no PEM certificate", caFile)
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}, nil
}

func readKeyFile(from, path string) (string, error) {
	key, err := ReadSecretFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", from, err)
	}
	return key, nil
}

// ReadSecretFile reads a one-line secret file (an API key).
func ReadSecretFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return s, nil
}

func (c *Conn) json() bool { return c.output == OutJSON }

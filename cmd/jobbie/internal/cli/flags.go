package cli

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/settings"
)

// Every command that calls Jobbie takes the same flags: --url, --key or
// --key-file, and -o table|json; a gateway's commands also --namespace,
// the control plane's also --ca. Each API reads its own environment
// variables where a flag is not given, so one shell can hold a gateway's
// and a control plane's settings at once. A flag beats a variable, a
// variable beats the gateway's context (config.go: --context's, else the
// current one), and a key beats a key file of the same rank. Defaults come from the
// environment at run time, not at flag definition, so --help never prints
// a key.

// Output formats of the commands.
const (
	OutTable = "table"
	OutJSON  = "json"
	OutYAML  = "yaml" // the JSON's data as YAML (yaml.go)
)

// OutputHelp is -o's help.
const OutputHelp = "output format: table, json (the API's JSON) or yaml (the same data)"

// CheckOutput refuses an output format other than table, json or yaml.
func CheckOutput(o string) error {
	if o != OutTable && o != OutJSON && o != OutYAML {
		return fmt.Errorf("--output must be %s, %s or %s, not %q", OutTable, OutJSON, OutYAML, o)
	}
	return nil
}

// An endpoint is one of Jobbie's APIs a command calls, and how its
// flags and variables are named.
type endpoint struct {
	name, defaultURL, urlEnv    string
	keyNoun, keyEnv, keyFileEnv string
	defaultKeyFile              string
	namespaceEnv                string // "" for no --namespace
	contextEnv                  string // "" for no --context: the endpoint has no contexts
	caEnv, defaultCA, caHelp    string // "" for no --ca
	// aliases are earlier spellings of its flags, still taken but not
	// shown: alias → flag.
	aliases map[string]string
}

var (
	// gatewayAPI is the public API, called with an API key.
	gatewayAPI = &endpoint{name: "gateway", defaultURL: "http://127.0.0.1:8080", urlEnv: "JOBBIE_URL",
		keyNoun: "API key", keyEnv: "JOBBIE_KEY", keyFileEnv: "JOBBIE_KEY_FILE", namespaceEnv: "JOBBIE_NAMESPACE",
		contextEnv: "JOBBIE_CONTEXT"}
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

	contextName string
	cx          *Context // the context in force, nil for none; read once
	cxErr       error
	cxRead      bool
}

// addConn registers ep's flags and -o on cmd, as persistent flags so
// its subcommands have them too.
func addConn(cmd *cobra.Command, ep *endpoint) *Conn {
	c := newConn(ep, cmd.PersistentFlags())
	c.fs.StringVarP(&c.output, "output", "o", OutTable, OutputHelp)
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
	if ep.contextEnv != "" {
		f.StringVar(&c.contextName, "context", "", "the config file's context to use instead of the current one ($"+ep.contextEnv+")")
	}
	// As settings of a role (jobbie worker), the endpoint's variables
	// are read too, and the key is a secret.
	settings.Secret(f, "key")
	settings.EnvAlias(f, "url", ep.urlEnv)
	settings.EnvAlias(f, "key", ep.keyEnv)
	settings.EnvAlias(f, "key-file", ep.keyFileEnv)
	if ep.namespaceEnv != "" {
		settings.EnvAlias(f, "namespace", ep.namespaceEnv)
	}
	if ep.contextEnv != "" {
		settings.EnvAlias(f, "context", ep.contextEnv)
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
// else the context's, else the flag's default.
func (c *Conn) value(name, env, val string) string {
	if c.given(name) != "" {
		return val
	}
	if v := os.Getenv(env); v != "" {
		return v
	}
	if cx := c.context(); cx != nil {
		switch {
		case name == "url" && cx.URL != "":
			return cx.URL
		case name == "namespace" && cx.Namespace != "":
			return cx.Namespace
		}
	}
	return val
}

// context is the config file's context in force: --context's or
// $JOBBIE_CONTEXT's, else the current one; nil for none. An error reading
// it is kept for client and Target to return.
func (c *Conn) context() *Context {
	if c.ep.contextEnv == "" {
		return nil
	}
	if !c.cxRead {
		c.cxRead = true
		name, from := c.contextName, "--context"
		if !c.fs.Changed("context") {
			name, from = os.Getenv(c.ep.contextEnv), "$"+c.ep.contextEnv
		}
		c.cx, c.cxErr = selectedContext(name, from)
	}
	return c.cx
}

// Namespace is the namespace the flags or environment name; "" for the
// key's default.
func (c *Conn) Namespace() string { return c.value("namespace", c.ep.namespaceEnv, c.namespace) }

// Target is the URL, key and namespace the flags and environment name.
// The key is "" when none is named.
func (c *Conn) Target() (url, key, namespace string, err error) {
	if c.context(); c.cxErr != nil {
		return "", "", "", c.cxErr
	}
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
	if err := CheckOutput(c.output); err != nil {
		return nil, err
	}
	if c.context(); c.cxErr != nil {
		return nil, c.cxErr
	}
	key, err := c.apiKey()
	if err != nil {
		return nil, err
	}
	opts := []client.Option{client.WithUserAgent("jobbie-cli")}
	hc, err := c.httpClient()
	if err != nil {
		return nil, err
	}
	if hc != nil {
		opts = append(opts, client.WithHTTPClient(hc))
	}
	if ns := c.Namespace(); ns != "" {
		opts = append(opts, client.WithNamespace(ns))
	}
	return client.New(c.value("url", c.ep.urlEnv, c.url), key, opts...), nil
}

// httpClient is the HTTP client that trusts the CA the flags or the
// context name; nil when they name none (the system's roots).
func (c *Conn) httpClient() (*http.Client, error) {
	caFlag, caFile := "--ca", ""
	switch {
	case c.ep.caEnv != "":
		caFile = c.value("ca", c.ep.caEnv, c.ca)
	case c.cx != nil && c.cx.CAFile != "":
		caFlag, caFile = "context "+c.cx.Name+" ca-file", c.cx.CAFile
	}
	if caFile == "" {
		return nil, nil
	}
	return tlsClient(caFlag, caFile)
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
	case c.context() != nil && c.cx.Key != "":
		return c.cx.Key, nil
	case c.cx != nil && c.cx.KeyFile != "":
		return readKeyFile("context "+c.cx.Name+" key-file", c.cx.KeyFile)
	case c.keyFile != "":
		return readKeyFile("--key-file", c.keyFile)
	}
	return "", &wordedError{msg: fmt.Sprintf("no %s: pass --key or --key-file, or set $%s or $%s", a.keyNoun, a.keyEnv, a.keyFileEnv), err: errNoKey}
}

// tlsClient trusts the CA certificate in caFile alone, as the control
// plane's certificate is the deployment CA's (and a context's gateway may
// be a private CA's); from names where caFile came from.
func tlsClient(from, caFile string) (*http.Client, error) {
	pool, err := readCA(from, caFile)
	if err != nil {
		return nil, err
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}, nil
}

// readCA reads a PEM CA certificate file into a pool.
func readCA(from, caFile string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: %s holds no PEM certificate", from, caFile)
	}
	return pool, nil
}

func readKeyFile(from, path string) (string, error) {
	key, err := ReadSecretFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", from, err)
	}
	return key, nil
}

// readSecretFrom reads the secret flag names from path, or from stdin for
// "-" (refusing a terminal: a typed secret would echo), so that no secret
// is ever a flag's value, in shell history and the process list.
func readSecretFrom(cmd *cobra.Command, flag, path string) (string, error) {
	if path != "-" {
		s, err := ReadSecretFile(path)
		if err != nil {
			return "", fmt.Errorf("%s: %w", flag, err)
		}
		return s, nil
	}
	in := cmd.InOrStdin()
	if isCharDevice(in) {
		return "", fmt.Errorf("%s -: stdin is a terminal: pipe the secret in, or give a file", flag)
	}
	b, err := io.ReadAll(io.LimitReader(in, 64<<10)) // past any secret's limit: the server refuses one too long
	if err != nil {
		return "", fmt.Errorf("%s -: %w", flag, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s -: stdin is empty", flag)
	}
	return s, nil
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

// json reports whether the command prints JSON: for -o json, and for -o
// yaml, which yaml.go turns into YAML.
func (c *Conn) json() bool { return c.output == OutJSON || c.output == OutYAML }

// keyNamespace is the namespace a request works in: the flags' or
// environment's, else the key's default, which an API key (a JWT) carries
// in its payload's "dns" claim. For the few calls whose body must name
// the namespace (a backup's); the server still checks the key may use it.
func (c *Conn) keyNamespace() (string, error) {
	if ns := c.Namespace(); ns != "" {
		return ns, nil
	}
	key, err := c.apiKey()
	if err != nil {
		return "", err
	}
	parts := strings.Split(key, ".")
	var claims struct {
		DefaultNamespace string `json:"dns"`
	}
	if len(parts) == 3 {
		if payload, err := base64.RawURLEncoding.DecodeString(parts[1]); err == nil {
			_ = json.Unmarshal(payload, &claims) // unreadable: no default, said below
		}
	}
	if claims.DefaultNamespace == "" {
		return "", errors.New("--namespace is required: the key names no default namespace")
	}
	return claims.DefaultNamespace, nil
}

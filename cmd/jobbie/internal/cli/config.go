package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// The config file holds named contexts, kubectl-style: each a gateway's
// URL, a key (a key file's path, or the key itself), a namespace and a CA
// file, and which context is current. `jobbie login` writes one and
// `jobbie context` lists, picks and deletes them; the gateway's commands
// read the current one (or --context's) beneath their flags and
// environment (flags.go). The file may hold a key, so it is written 0600.

// A Context is where and as whom the gateway's commands call by default.
type Context struct {
	Name      string `yaml:"name" json:"name"`
	URL       string `yaml:"url" json:"url"`
	KeyFile   string `yaml:"key-file,omitempty" json:"key_file,omitempty"`
	Key       string `yaml:"key,omitempty" json:"-"` // never printed
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	CAFile    string `yaml:"ca-file,omitempty" json:"ca_file,omitempty"`
}

// Config is the config file.
type Config struct {
	CurrentContext string    `yaml:"current-context"`
	Contexts       []Context `yaml:"contexts"`
}

// ConfigPath is $XDG_CONFIG_HOME/jobbie/config.yaml, or
// ~/.config/jobbie/config.yaml when XDG_CONFIG_HOME is unset.
func ConfigPath() (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("the config file: %w", err)
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "jobbie", "config.yaml"), nil
}

// loadConfig reads the config file; no file is an empty config.
func loadConfig() (*Config, string, error) {
	path, err := ConfigPath()
	if err != nil {
		return nil, "", err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{}, path, nil
	}
	if err != nil {
		return nil, path, err
	}
	var cfg Config
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		return nil, path, fmt.Errorf("%s: %w", path, err)
	}
	return &cfg, path, nil
}

// save writes the config atomically, readable by its owner alone.
func (cfg *Config) save(path string) error {
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".config-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after the rename, a no-op
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// find is the context named name, nil when there is none.
func (cfg *Config) find(name string) *Context {
	for i := range cfg.Contexts {
		if cfg.Contexts[i].Name == name {
			return &cfg.Contexts[i]
		}
	}
	return nil
}

// put adds cx, or replaces the context of its name.
func (cfg *Config) put(cx Context) {
	if old := cfg.find(cx.Name); old != nil {
		*old = cx
		return
	}
	cfg.Contexts = append(cfg.Contexts, cx)
}

// remove deletes the context named name, and reports whether there was one.
func (cfg *Config) remove(name string) bool {
	for i := range cfg.Contexts {
		if cfg.Contexts[i].Name == name {
			cfg.Contexts = append(cfg.Contexts[:i], cfg.Contexts[i+1:]...)
			if cfg.CurrentContext == name {
				cfg.CurrentContext = ""
			}
			return true
		}
	}
	return false
}

// names lists the contexts' names, for an error naming the choices.
func (cfg *Config) names() string {
	var ns []string
	for _, c := range cfg.Contexts {
		ns = append(ns, c.Name)
	}
	if len(ns) == 0 {
		return "there are none: `jobbie login` makes one"
	}
	return "there are " + strings.Join(ns, ", ")
}

// checkContextName refuses a name a shell or a table would mangle.
func checkContextName(name string) error {
	switch {
	case name == "":
		return errors.New("the context name is empty")
	case len(name) > 100:
		return errors.New("the context name is over 100 characters")
	case strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return fmt.Errorf("context name %q holds blanks or control characters", name)
	}
	return nil
}

// selectedContext is the context the gateway's commands use: --context's
// (or $JOBBIE_CONTEXT's), else the current one; nil when neither names
// one. A name that names no context is an error.
func selectedContext(name, from string) (*Context, error) {
	cfg, path, err := loadConfig()
	if err != nil {
		return nil, err
	}
	if name == "" {
		if cfg.CurrentContext == "" {
			return nil, nil
		}
		name, from = cfg.CurrentContext, "current-context in "+path
	}
	cx := cfg.find(name)
	if cx == nil {
		return nil, fmt.Errorf("%s: no context %q in %s (%s)", from, name, path, cfg.names())
	}
	return cx, nil
}

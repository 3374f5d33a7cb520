// Package settings is the one schema of the server roles' settings (dev,
// gateway, control, shard, worker) and how a role reads them: a YAML file
// (--config), JOBBIE_* environment variables and flags, flags winning
// over the environment, the environment over the file, the file over the
// defaults; unknown keys and values out of range refused, naming the
// key's path; --dry-run printing the effective settings with secrets
// redacted; and the reference in docs/configuration.md.
//
// A setting is defined once, where its role defines its flag: the flag
// gives its name, type, default and help, and annotations beside it
// (Range, OneOf, Secret, EnvAlias) what a flag cannot say. Everything
// else follows from the flag's name and the role's: the YAML path
// <role>.<flag with _ for ->, the variable JOBBIE_<PATH in capitals>.
package settings

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Annotations a flag carries in its pflag.Flag.Annotations.
const (
	annMin      = "jobbie.settings.min"
	annMax      = "jobbie.settings.max"
	annExcept   = "jobbie.settings.except"
	annOneOf    = "jobbie.settings.oneof"
	annSecret   = "jobbie.settings.secret"
	annEnvAlias = "jobbie.settings.env_alias"
	annDocDef   = "jobbie.settings.doc_default"
	// roleAnnotation names, on a command, the role whose settings it
	// reads (Install).
	roleAnnotation = "jobbie.settings.role"
)

// Flags that are how settings are read, not settings themselves.
const (
	configFlag = "config"
	dryRunFlag = "dry-run"
)

// Range bounds flag name's value, either bound "" for none. Bounds are
// written as the flag's type writes values (5, 1s).
func Range(f *pflag.FlagSet, name, min, max string) {
	if min != "" {
		must(f.SetAnnotation(name, annMin, []string{min}))
	}
	if max != "" {
		must(f.SetAnnotation(name, annMax, []string{max}))
	}
}

// Except refuses these values of flag name (inside its range), e.g. 0 of
// a limit where -1 means none.
func Except(f *pflag.FlagSet, name string, values ...string) {
	must(f.SetAnnotation(name, annExcept, values))
}

// OneOf limits flag name to these values.
func OneOf(f *pflag.FlagSet, name string, values ...string) {
	must(f.SetAnnotation(name, annOneOf, values))
}

// Secret marks flag name as holding a secret: --dry-run prints it
// redacted and the docs say so.
func Secret(f *pflag.FlagSet, name string) {
	must(f.SetAnnotation(name, annSecret, []string{"true"}))
}

// EnvAlias names an older variable flag name is also read from, below
// its JOBBIE_<PATH> (e.g. JOBBIE_KEY of the CLI's --key).
func EnvAlias(f *pflag.FlagSet, name, env string) {
	must(f.SetAnnotation(name, annEnvAlias, []string{env}))
}

// DocDefault is what the docs say of flag name's default when its value
// depends on the machine (e.g. on the descriptor limit).
func DocDefault(f *pflag.FlagSet, name, what string) {
	must(f.SetAnnotation(name, annDocDef, []string{what}))
}

// must panics on an annotation of a flag that does not exist: a
// programming error every test of the command finds.
func must(err error) {
	if err != nil {
		panic("settings: " + err.Error())
	}
}

// A Setting is one setting of a role, as the schema describes it.
type Setting struct {
	Role     string
	Path     string // in the YAML file: <role>.<key>
	Env      string // JOBBIE_<PATH>
	EnvAlias string // an older variable also read, "" for none
	Flag     string
	Type     string // the flag's type: string, int, uint64, bool, duration, stringArray …
	Default  string
	Secret   bool
	Required bool
	Help     string
	// DocDefault describes a default that depends on the machine, ""
	// when Default is the same everywhere.
	DocDefault string

	min, max string
	except   []string
	oneOf    []string
	flag     *pflag.Flag
}

// Key is the setting's name inside its role's section.
func (s Setting) Key() string { return s.Path[len(s.Role)+1:] }

// List reports whether the setting takes several values (a YAML list).
func (s Setting) List() bool {
	_, ok := s.flag.Value.(pflag.SliceValue)
	return ok
}

// Range describes the values the setting takes, "" for any of its type.
func (s Setting) Range() string {
	var parts []string
	switch {
	case len(s.oneOf) > 0:
		parts = append(parts, "one of "+strings.Join(s.oneOf, ", "))
	case s.min != "" && s.max != "":
		parts = append(parts, s.min+" to "+s.max)
	case s.min != "":
		parts = append(parts, s.min+" or more")
	case s.max != "":
		parts = append(parts, s.max+" or less")
	}
	if len(s.except) > 0 {
		parts = append(parts, "not "+strings.Join(s.except, " or "))
	}
	return strings.Join(parts, ", ")
}

// KeyOf is the key of the setting of flag name: its name with _ for -.
func KeyOf(flag string) string { return strings.ReplaceAll(flag, "-", "_") }

// EnvOf is the variable of the setting at path.
func EnvOf(path string) string {
	return "JOBBIE_" + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
}

// Schema is role's settings from the flags of cmd, sorted by path: every
// flag but --config, --dry-run, --help and hidden ones (old spellings).
func Schema(cmd *cobra.Command, role string) []Setting {
	var out []Setting
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" || f.Name == configFlag || f.Name == dryRunFlag {
			return
		}
		path := role + "." + KeyOf(f.Name)
		s := Setting{Role: role, Path: path, Env: EnvOf(path), Flag: f.Name, Type: f.Value.Type(),
			Default: f.DefValue, Help: f.Usage, flag: f}
		a := f.Annotations
		s.min, s.max = first(a[annMin]), first(a[annMax])
		s.except, s.oneOf = a[annExcept], a[annOneOf]
		s.Secret = len(a[annSecret]) > 0
		s.EnvAlias = first(a[annEnvAlias])
		s.DocDefault = first(a[annDocDef])
		s.Required = len(a[cobra.BashCompOneRequiredFlag]) > 0
		if s.List() {
			s.Default = strings.Trim(s.Default, "[]")
		}
		out = append(out, s)
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// Roles are the commands under root that read settings (Install), with
// their roles, in the order root lists them.
func Roles(root *cobra.Command) []RoleCommand {
	var out []RoleCommand
	for _, c := range root.Commands() {
		if r := c.Annotations[roleAnnotation]; r != "" {
			out = append(out, RoleCommand{Role: r, Cmd: c})
		}
	}
	return out
}

// A RoleCommand is a role and the command that runs it.
type RoleCommand struct {
	Role string
	Cmd  *cobra.Command
}

package settings

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// Redacted is what --dry-run prints for a secret that is set.
const Redacted = "[redacted]"

// ConfigEnv names the config file when --config is not given.
const ConfigEnv = "JOBBIE_CONFIG"

// Install makes cmd read role's settings: it adds --config and
// --dry-run, and before cmd runs (ahead of cobra's check of required
// flags, which the file and the environment may satisfy) fills its flags
// from the environment and the file and checks them. With --dry-run cmd
// then prints the effective settings instead of running. Call it once
// cmd's flags and RunE are defined.
func Install(cmd *cobra.Command, role string) {
	var configPath string
	var dryRun bool
	f := cmd.Flags()
	f.StringVar(&configPath, configFlag, "", "read settings from this YAML file, under \""+role+":\" (docs/configuration.md); JOBBIE_* variables and flags win over it ($"+ConfigEnv+")")
	f.BoolVar(&dryRun, dryRunFlag, false, "check the settings, print the effective ones (secrets redacted) and exit: 0 when they are good, 1 with every problem when not")
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[roleAnnotation] = role
	var eff *Effective
	pre := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		path := configPath
		if !c.Flags().Changed(configFlag) {
			path = os.Getenv(ConfigEnv)
		}
		var err error
		if eff, err = Load(c.Flags(), Schema(c, role), role, path, os.LookupEnv); err != nil {
			return fmt.Errorf("%s: the settings are not good:\n%w", c.Name(), indent(err))
		}
		if pre != nil && !dryRun {
			return pre(c, args)
		}
		return nil
	}
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if dryRun {
			return eff.Print(c.OutOrStdout())
		}
		return run(c, args)
	}
}

// indent puts each line of a joined error on a line of its own, indented.
type indented struct{ error }

func indent(err error) error { return indented{err} }

func (e indented) Error() string {
	return "  " + strings.ReplaceAll(e.error.Error(), "\n", "\n  ")
}

func (e indented) Unwrap() error { return e.error }

// Print writes the effective settings as a YAML file --config reads,
// each value's source beside it, secrets redacted.
func (e *Effective) Print(w io.Writer) error {
	section := &yaml.Node{Kind: yaml.MappingNode}
	for _, s := range e.Settings {
		v := valueNode(s)
		switch src := e.Sources[s.Path]; src {
		case FromDefault:
		case FromFlag:
			v.LineComment = "flag --" + s.Flag
		default:
			v.LineComment = string(src) + " " + e.Detail[s.Path]
		}
		section.Content = append(section.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s.Key()}, v)
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode, HeadComment: "The effective settings of jobbie " + e.Role + " (secrets redacted).",
		Content: []*yaml.Node{{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: e.Role}, section}}}}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	return enc.Close()
}

// valueNode is s's value as YAML of its type: a secret that is set as
// Redacted, a list as a list.
func valueNode(s Setting) *yaml.Node {
	if sv, ok := s.flag.Value.(pflag.SliceValue); ok {
		// Flow style keeps the source's comment on the setting's line.
		n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, it := range sv.GetSlice() {
			if s.Secret {
				it = Redacted
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: it})
		}
		return n
	}
	v := s.flag.Value.String()
	if s.Secret && v != "" {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: Redacted}
	}
	tag := "!!str"
	switch s.Type {
	case "bool":
		tag = "!!bool"
	case "int", "int32", "int64", "uint", "uint32", "uint64":
		tag = "!!int"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v}
}

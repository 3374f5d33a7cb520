package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// knownRoles are the sections a file may hold. A role reads its own;
// each of the others is checked by its role when that role reads the
// file, so one file may serve every process of a deployment.
var knownRoles = []string{"dev", "gateway", "control", "shard", "worker"}

// Source is where a setting's effective value came from.
type Source string

// The sources, strongest first.
const (
	FromFlag    Source = "flag"
	FromEnv     Source = "env"
	FromFile    Source = "file"
	FromDefault Source = "default"
)

// Effective is role's settings once read: each setting with where its
// value came from.
type Effective struct {
	Role     string
	Settings []Setting
	Sources  map[string]Source // by path
	// Detail says which variable or file gave a value, by path.
	Detail map[string]string
}

// Load reads role's settings into the flags of fs: a flag given on the
// command line stays; else its variable's value, when set and not empty;
// else the file's (configPath, "" for none); else its default. Then
// every value is checked. Every problem is returned, joined, each naming
// the setting's path.
func Load(fs *pflag.FlagSet, settings []Setting, role, configPath string, env func(string) (string, bool)) (*Effective, error) {
	eff := &Effective{Role: role, Settings: settings, Sources: map[string]Source{}, Detail: map[string]string{}}
	var errs []error
	file := map[string]*yaml.Node{}
	if configPath != "" {
		var err error
		if file, err = readFile(configPath, role, settings); file == nil {
			return nil, err
		}
		errs = append(errs, err) // unknown keys; the known ones are still read and checked
	}
	for _, s := range settings {
		if s.flag.Changed {
			eff.Sources[s.Path] = FromFlag
			continue
		}
		name, v, ok := lookupEnv(s, env)
		switch {
		case ok:
			if err := setText(fs, s, v); err != nil {
				errs = append(errs, fmt.Errorf("%s (from %s): %w", s.Path, name, s.quiet(err)))
			}
			eff.Sources[s.Path], eff.Detail[s.Path] = FromEnv, name
		case file[s.Key()] != nil:
			if err := setNode(fs, s, file[s.Key()]); err != nil {
				errs = append(errs, fmt.Errorf("%s (line %d of %s): %w", s.Path, file[s.Key()].Line, configPath, s.quiet(err)))
			}
			eff.Sources[s.Path], eff.Detail[s.Path] = FromFile, configPath
		default:
			eff.Sources[s.Path] = FromDefault
		}
	}
	errs = append(errs, Check(settings))
	return eff, errors.Join(errs...)
}

// quiet is err without the value that caused it, for a secret: a parse
// error quotes the value.
func (s Setting) quiet(err error) error {
	if !s.Secret {
		return err
	}
	return fmt.Errorf("not a valid %s (the value is a secret, so it is not shown)", s.Type)
}

// lookupEnv is s's variable's value, or its older alias's.
func lookupEnv(s Setting, env func(string) (string, bool)) (name, v string, ok bool) {
	for _, name := range []string{s.Env, s.EnvAlias} {
		if name == "" {
			continue
		}
		if v, ok := env(name); ok && v != "" {
			return name, v, true
		}
	}
	return "", "", false
}

// readFile is role's section of the YAML file at path, by key: an
// unknown section, an unknown key of role's, or a value that is a
// mapping is refused with its path.
func readFile(path, role string, settings []Setting) (map[string]*yaml.Node, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) || err == nil && len(doc.Content) == 0 {
		return map[string]*yaml.Node{}, nil // an empty file sets nothing
	} else if err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("--config %s: want a mapping of sections (%s), not %s", path, strings.Join(knownRoles, ", "), kindName(top))
	}
	known := map[string]bool{}
	for _, s := range settings {
		known[s.Key()] = true
	}
	out := map[string]*yaml.Node{}
	var errs []error
	for i := 0; i+1 < len(top.Content); i += 2 {
		section, body := top.Content[i].Value, top.Content[i+1]
		switch {
		case !slices.Contains(knownRoles, section):
			errs = append(errs, fmt.Errorf("%s: unknown section (line %d of %s); the sections are %s", section, top.Content[i].Line, path, strings.Join(knownRoles, ", ")))
			continue
		case section != role:
			continue
		case body.Kind == yaml.ScalarNode && body.Tag == "!!null":
			continue // "gateway:" with nothing under it
		case body.Kind != yaml.MappingNode:
			errs = append(errs, fmt.Errorf("%s: want a mapping of settings, not %s (line %d of %s)", section, kindName(body), body.Line, path))
			continue
		}
		for j := 0; j+1 < len(body.Content); j += 2 {
			key := body.Content[j].Value
			if !known[key] {
				errs = append(errs, fmt.Errorf("%s.%s: unknown setting (line %d of %s)%s", role, key, body.Content[j].Line, path, suggest(key, known)))
				continue
			}
			if out[key] != nil {
				errs = append(errs, fmt.Errorf("%s.%s: given twice (line %d of %s)", role, key, body.Content[j].Line, path))
			}
			out[key] = body.Content[j+1]
		}
	}
	return out, errors.Join(errs...)
}

// suggest names the known key nearest to key, when one is near.
func suggest(key string, known map[string]bool) string {
	best, bestD := "", 3
	for k := range known {
		if d := distance(key, k); d < bestD || d == bestD && k < best {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return "a single value"
	}
}

// setText sets s from a variable's text: a list's items comma-separated.
func setText(fs *pflag.FlagSet, s Setting, v string) error {
	if s.List() {
		var items []string
		for _, it := range strings.Split(v, ",") {
			if it = strings.TrimSpace(it); it != "" {
				items = append(items, it)
			}
		}
		return setList(s, items)
	}
	return fs.Set(s.Flag, v)
}

// setNode sets s from the file's value: a single value, or a list for a
// setting that takes several.
func setNode(fs *pflag.FlagSet, s Setting, n *yaml.Node) error {
	switch {
	case n.Kind == yaml.ScalarNode && s.List():
		return setList(s, []string{n.Value})
	case n.Kind == yaml.ScalarNode:
		return fs.Set(s.Flag, n.Value)
	case n.Kind == yaml.SequenceNode && s.List():
		items := make([]string, 0, len(n.Content))
		for _, it := range n.Content {
			if it.Kind != yaml.ScalarNode {
				return fmt.Errorf("want a list of single values, not one holding %s", kindName(it))
			}
			items = append(items, it.Value)
		}
		return setList(s, items)
	case s.List():
		return fmt.Errorf("want a value or a list of values, not %s", kindName(n))
	default:
		return fmt.Errorf("want a single %s value, not %s", s.Type, kindName(n))
	}
}

func setList(s Setting, items []string) error {
	if err := s.flag.Value.(pflag.SliceValue).Replace(items); err != nil {
		return err
	}
	s.flag.Changed = true // given, as far as the role can tell
	return nil
}

// Check checks every setting's value against its range and whether it
// is required; every problem is returned, joined.
func Check(settings []Setting) error {
	var errs []error
	for _, s := range settings {
		if err := s.check(); err != nil {
			errs = append(errs, fmt.Errorf("%s (--%s, %s): %w", s.Path, s.Flag, s.Env, err))
		}
	}
	return errors.Join(errs...)
}

func (s Setting) check() error {
	if s.Required && !s.flag.Changed {
		return errors.New("required")
	}
	v, shown := s.flag.Value.String(), s.flag.Value.String()
	if s.Secret {
		shown = Redacted // the messages quote it
	}
	if len(s.oneOf) > 0 && !slices.Contains(s.oneOf, v) {
		return fmt.Errorf("%q is not %s", shown, s.Range())
	}
	if slices.Contains(s.except, v) {
		return fmt.Errorf("%s is out of range: %s", shown, s.Range())
	}
	if s.min == "" && s.max == "" {
		return nil
	}
	x, err := s.number(v)
	if err != nil {
		return s.quiet(err)
	}
	lo, loErr := s.number(s.min)
	hi, hiErr := s.number(s.max)
	if s.min != "" && (loErr != nil || x < lo) || s.max != "" && (hiErr != nil || x > hi) {
		return fmt.Errorf("%s is out of range: %s", shown, s.Range())
	}
	return nil
}

// number is a value of a numeric or duration setting, to compare with
// its bounds.
func (s Setting) number(v string) (float64, error) {
	if s.Type == "duration" {
		d, err := time.ParseDuration(v)
		return float64(d), err
	}
	if u, err := strconv.ParseUint(v, 10, 64); err == nil && u > math.MaxInt64 {
		return float64(u), nil
	}
	n, err := strconv.ParseFloat(v, 64)
	return n, err
}

// Package rolelog is the log of a Jobbie process: slog to a writer
// (stderr) as text or JSON, from the given level up (--log-format,
// --log-level, settings of every role), with the value of any attribute
// whose name says it holds a secret redacted, so a careless log call
// cannot write one.
package rolelog

import (
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/cmd/jobbie/internal/settings"
)

// The formats and levels.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// Levels are the names --log-level takes.
var Levels = []string{"debug", "info", "warn", "error"}

// Options are a process's log settings.
type Options struct{ Format, Level string }

// Flags registers --log-format and --log-level, the level defaulting to
// defaultLevel.
func (o *Options) Flags(f *pflag.FlagSet, defaultLevel string) {
	f.StringVar(&o.Format, "log-format", FormatText, "how log lines are written to stderr: text (key=value) or json (one object a line)")
	settings.OneOf(f, "log-format", FormatText, FormatJSON)
	f.StringVar(&o.Level, "log-level", defaultLevel, "the least severe log lines written: debug, info, warn or error (debug adds a line per API request)")
	settings.OneOf(f, "log-level", Levels...)
}

// New is the logger the options describe, writing to w. A value the
// settings' check refused cannot come here; a format other than json is
// text, a level not known info.
func (o Options) New(w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.Level)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: redact}
	if o.Format == FormatJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// secretWords are parts of attribute names whose values are secrets.
var secretWords = []string{"secret", "token", "password", "authorization", "api_key", "apikey", "private"}

// redact replaces the value of an attribute named like a secret (or
// named just "key", as an API key is).
func redact(_ []string, a slog.Attr) slog.Attr {
	k := strings.ToLower(a.Key)
	if k == "key" {
		return slog.String(a.Key, settings.Redacted)
	}
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return slog.String(a.Key, settings.Redacted)
		}
	}
	return a
}

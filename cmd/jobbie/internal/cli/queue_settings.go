package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// The declarative queue's settings from the command line, beside its push
// settings (queue_push.go): `jobbie queues create` and `jobbie queues
// set` take them; only the flags given change the queue.

type settingsFlags struct {
	description                 string
	paused                      bool
	concurrency, keyConcurrency int64
	throttle                    string // RATE/PERIOD
	maxRetries                  int
	retryBackoff                string
	baseDelay, maxDelay, lease  time.Duration
	expireAfter, retention      time.Duration
	noConcurrency, noKeyConc    bool
	noThrottle, noDefaults      bool
	schemaFile                  string
	removeSchema                bool
	schema                      json.RawMessage // read from schemaFile by check
}

// backoffs are the retry backoffs a queue's defaults may name.
var backoffs = []string{wire.BackoffExponential, wire.BackoffLinear, wire.BackoffFixed, wire.BackoffNone}

// settingFlagNames are the flags settingsFlags registers, to tell which
// were given.
var settingFlagNames = []string{"description", "paused", "concurrency", "no-concurrency", "key-concurrency",
	"no-key-concurrency", "throttle", "no-throttle", "max-retries", "retry-backoff", "retry-base-delay",
	"retry-max-delay", "lease-duration", "expire-after", "retention", "no-defaults", "schema-file", "remove-schema"}

func (s *settingsFlags) register(f *pflag.FlagSet) {
	f.StringVar(&s.description, "description", "", "the queue's description (at most 1024 characters)")
	f.BoolVar(&s.paused, "paused", false, "pause (true) or resume (false) the queue")
	f.Int64Var(&s.concurrency, "concurrency", 0, "most of the queue's jobs active at once across all workers")
	f.BoolVar(&s.noConcurrency, "no-concurrency", false, "remove the concurrency limit")
	f.Int64Var(&s.keyConcurrency, "key-concurrency", 0, "most active jobs of each concurrency key (1 to 10000)")
	f.BoolVar(&s.noKeyConc, "no-key-concurrency", false, "remove the per-key cap")
	f.StringVar(&s.throttle, "throttle", "", "at most RATE fetches per PERIOD, as RATE/PERIOD (100/1m); PERIOD 1s to 168h")
	f.BoolVar(&s.noThrottle, "no-throttle", false, "remove the throttle")
	f.IntVar(&s.maxRetries, "max-retries", 0, "default retries of the queue's jobs (0: never retry)")
	f.StringVar(&s.retryBackoff, "retry-backoff", "", "default backoff: "+strings.Join(backoffs, ", "))
	f.DurationVar(&s.baseDelay, "retry-base-delay", 0, "default first retry delay")
	f.DurationVar(&s.maxDelay, "retry-max-delay", 0, "default longest retry delay")
	f.DurationVar(&s.lease, "lease-duration", 0, "lease of a fetch that asks for none")
	f.DurationVar(&s.expireAfter, "expire-after", 0, "how long a job may wait before it runs; past it, it is dead")
	f.DurationVar(&s.retention, "retention", 0, "how long completed and cancelled jobs are kept")
	f.BoolVar(&s.noDefaults, "no-defaults", false, "remove every job default of the queue (before the ones given)")
	f.StringVar(&s.schemaFile, "schema-file", "", "the JSON Schema (draft 2020-12) every payload must satisfy, from this file (- for stdin)")
	f.BoolVar(&s.removeSchema, "remove-schema", false, "remove the payload schema: any payload is taken again")
}

// given lists the setting flags the command line gave.
func (s *settingsFlags) given(cmd *cobra.Command) []string {
	var g []string
	for _, n := range settingFlagNames {
		if cmd.Flags().Changed(n) {
			g = append(g, "--"+n)
		}
	}
	return g
}

// check refuses bad or contradictory settings before anything is sent.
func (s *settingsFlags) check(cmd *cobra.Command) error {
	given := cmd.Flags().Changed
	pairs := [][2]string{{"concurrency", "no-concurrency"}, {"key-concurrency", "no-key-concurrency"}, {"throttle", "no-throttle"},
		{"schema-file", "remove-schema"}}
	for _, p := range pairs {
		if given(p[0]) && given(p[1]) {
			return fmt.Errorf("--%s cannot go with --%s", p[0], p[1])
		}
	}
	switch {
	case len(s.description) > 1024:
		return fmt.Errorf("--description is over 1024 characters")
	case given("concurrency") && s.concurrency < 1:
		return fmt.Errorf("--concurrency must be at least 1, not %d (--no-concurrency removes the limit)", s.concurrency)
	case given("key-concurrency") && (s.keyConcurrency < 1 || s.keyConcurrency > 10000):
		return fmt.Errorf("--key-concurrency must be 1 to 10000, not %d", s.keyConcurrency)
	case given("max-retries") && s.maxRetries < 0:
		return fmt.Errorf("--max-retries must not be negative, not %d", s.maxRetries)
	case given("retry-backoff") && !slices.Contains(backoffs, s.retryBackoff):
		return fmt.Errorf("--retry-backoff must be one of %s, not %q", strings.Join(backoffs, ", "), s.retryBackoff)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"retry-base-delay", s.baseDelay}, {"retry-max-delay", s.maxDelay}, {"lease-duration", s.lease},
		{"expire-after", s.expireAfter}, {"retention", s.retention}} {
		if given(d.name) && d.v <= 0 {
			return fmt.Errorf("--%s must be positive, not %s", d.name, d.v)
		}
	}
	if given("throttle") {
		if _, err := parseThrottle(s.throttle); err != nil {
			return err
		}
	}
	if given("schema-file") {
		raw, err := readSchemaFile(cmd.InOrStdin(), s.schemaFile)
		if err != nil {
			return err
		}
		s.schema = raw
	}
	return nil
}

// readSchemaFile reads --schema-file, checked to be one JSON value; the
// server checks that it is a schema and names "schema" if it is not.
func readSchemaFile(stdin io.Reader, path string) (json.RawMessage, error) {
	var raw []byte
	var err error
	if path == "-" {
		if isCharDevice(stdin) {
			return nil, errors.New("--schema-file -: pipe the JSON Schema into stdin")
		}
		raw, err = io.ReadAll(io.LimitReader(stdin, 4*wire.MaxQueueSchemaBytes))
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("--schema-file: %w", err)
	}
	raw = bytes.TrimSpace(raw)
	var v any
	switch err := json.Unmarshal(raw, &v); {
	case len(raw) == 0:
		return nil, fmt.Errorf("--schema-file %s is empty: give a JSON Schema, e.g. {\"type\":\"object\"}", path)
	case err != nil:
		return nil, fmt.Errorf("--schema-file %s is not JSON: %v", path, err)
	case v == nil:
		return nil, fmt.Errorf("--schema-file %s holds null: --remove-schema removes the schema", path)
	}
	return raw, nil
}

// parseThrottle reads RATE/PERIOD.
func parseThrottle(v string) (*client.QueueThrottleSpec, error) {
	rate, period, ok := strings.Cut(v, "/")
	var t client.QueueThrottleSpec
	_, err := fmt.Sscanf(rate, "%d", &t.Rate)
	if ok && err == nil {
		t.Period, err = time.ParseDuration(period)
	}
	if !ok || err != nil || t.Rate < 1 || t.Period < time.Second || t.Period > 7*24*time.Hour || strings.TrimSpace(rate) != rate {
		return nil, fmt.Errorf("--throttle %q: want RATE/PERIOD, a rate of 1 or more per 1s to 168h (100/1m)", v)
	}
	return &t, nil
}

// apply changes spec by the settings given.
func (s *settingsFlags) apply(cmd *cobra.Command, spec *client.QueueSpec) {
	given := cmd.Flags().Changed
	if given("description") {
		spec.Description = s.description
	}
	if given("paused") {
		spec.Paused = s.paused
	}
	switch {
	case given("concurrency"):
		spec.Concurrency = &s.concurrency
	case s.noConcurrency:
		spec.Concurrency = nil
	}
	switch {
	case given("key-concurrency"):
		spec.KeyConcurrency = &s.keyConcurrency
	case s.noKeyConc:
		spec.KeyConcurrency = nil
	}
	switch {
	case given("throttle"):
		spec.Throttle, _ = parseThrottle(s.throttle) // checked
	case s.noThrottle:
		spec.Throttle = nil
	}
	switch {
	case given("schema-file"):
		spec.Schema = s.schema
	case s.removeSchema:
		spec.Schema = client.NoSchema
	default:
		// Kept as the server has it, even if it changed since set read it.
		spec.Schema = nil
	}
	d := &spec.Defaults
	if s.noDefaults {
		*d = client.QueueDefaultsSpec{}
	}
	if given("max-retries") {
		d.MaxRetries = &s.maxRetries
	}
	if given("retry-backoff") {
		d.RetryBackoff = s.retryBackoff
	}
	for _, f := range []struct {
		name string
		to   *time.Duration
		v    time.Duration
	}{{"retry-base-delay", &d.RetryBaseDelay, s.baseDelay}, {"retry-max-delay", &d.RetryMaxDelay, s.maxDelay},
		{"lease-duration", &d.LeaseDuration, s.lease}, {"expire-after", &d.ExpireAfter, s.expireAfter},
		{"retention", &d.Retention, s.retention}} {
		if given(f.name) {
			*f.to = f.v
		}
	}
}

// queueCreateCmd is `jobbie queues create`: a new queue with the settings
// given; a queue of that name already there is refused, unchanged.
func queueCreateCmd(api *Conn) *cobra.Command {
	var s settingsFlags
	var p pushFlags
	cmd := &cobra.Command{
		Use:   "create <name>",
		Short: "Create a queue with its settings (refused if it exists: set changes one)",
		Long: `create declares a new queue with the settings the flags give (PUT
/api/v1/queues/{name}); the rest take their defaults. A queue of that name
already there is refused and left as it is; ` + "`jobbie queues set`" + ` changes one.

  jobbie queues create emails.send --concurrency 20 --throttle 100/1m --max-retries 5 --retention 72h
  jobbie queues create reports --paused --description 'nightly reports' --push-url https://hooks.example.com/reports
  jobbie queues create payments --schema-file payment.schema.json`,
		Args: exactArgs(1),
	}
	s.register(cmd.Flags())
	p.register(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		name := args[0]
		if err := tenancy.ValidateQueue(name); err != nil {
			return err
		}
		if err := s.check(cmd); err != nil {
			return err
		}
		if p.any(cmd) {
			if err := p.check(cmd); err != nil {
				return err
			}
		}
		return runAPI(cmd, api, "queue "+name, tenancy.ActQueueManage,
			func(ctx context.Context, c *client.Client) (*client.Queue, error) {
				_, err := c.GetQueue(ctx, name)
				switch {
				case err == nil:
					return nil, fmt.Errorf("queue %s already exists: `jobbie queues set %s …` changes it", name, name)
				case !client.IsNotFound(err):
					return nil, err
				}
				var spec client.QueueSpec
				s.apply(cmd, &spec)
				if p.any(cmd) {
					if err := p.apply(cmd, &spec); err != nil {
						return nil, err
					}
				}
				return c.PutQueue(ctx, name, spec)
			},
			printQueue)
	}
	return cmd
}

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// `jobbie schedules create` and `update`: every field of a schedule from
// flags. Update reads the schedule and changes only what the flags give,
// as the API's PUT replaces the whole schedule.

type scheduleFlags struct {
	name, queue, cron, timezone, payload, priority, uniqueKey string
	maxRetries                                                int
	enabled                                                   bool
}

func (s *scheduleFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.name, "name", "", "the schedule's name, unique in its queue (1-128 bytes, not starting with sch_)")
	f.StringVar(&s.queue, "queue", "", "the queue its jobs go to")
	f.StringVar(&s.cron, "cron", "", `when: a 5-field cron expression ("0 9 * * 1-5") or a descriptor ("@hourly", "@every 90s")`)
	f.StringVar(&s.timezone, "timezone", "", "the IANA time zone the cron expression is read in (default UTC)")
	f.StringVar(&s.payload, "payload", "", "each job's payload as JSON; - reads it from stdin (default {})")
	f.StringVar(&s.priority, "priority", "", "each job's priority: critical, high or normal (default normal)")
	f.StringVar(&s.uniqueKey, "unique-key", "", "each job's unique key: no new job while one of that key is live")
	f.IntVar(&s.maxRetries, "max-retries", 0, "each job's retries (default: the queue's default when the job is enqueued)")
	f.BoolVar(&s.enabled, "enabled", true, "whether the schedule fires (--enabled=false to hold it)")
}

// check refuses bad flags before anything is sent, reading the payload.
func (s *scheduleFlags) check(cmd *cobra.Command) (payload json.RawMessage, err error) {
	given := cmd.Flags().Changed
	if given("name") {
		if s.name == "" || len(s.name) > 128 || strings.HasPrefix(s.name, "sch_") ||
			strings.ContainsFunc(s.name, func(r rune) bool { return r < ' ' }) {
			return nil, fmt.Errorf("--name %q: 1-128 bytes, no control characters, not starting with sch_", s.name)
		}
	}
	if given("queue") {
		if err := tenancy.ValidateQueue(s.queue); err != nil {
			return nil, fmt.Errorf("--queue: %w", err)
		}
	}
	if given("cron") && strings.TrimSpace(s.cron) == "" {
		return nil, fmt.Errorf("--cron is empty")
	}
	if given("timezone") && s.timezone != "" {
		if _, err := time.LoadLocation(s.timezone); err != nil {
			return nil, fmt.Errorf("--timezone %q is not an IANA time zone", s.timezone)
		}
	}
	switch s.priority {
	case "", wire.PriorityCritical, wire.PriorityHigh, wire.PriorityNormal:
	default:
		return nil, fmt.Errorf("--priority must be critical, high or normal, not %q", s.priority)
	}
	if given("max-retries") && s.maxRetries < 0 {
		return nil, fmt.Errorf("--max-retries must not be negative, not %d", s.maxRetries)
	}
	if !given("payload") {
		return nil, nil
	}
	raw := []byte(s.payload)
	if s.payload == "-" {
		if isCharDevice(cmd.InOrStdin()) {
			return nil, fmt.Errorf("--payload -: pipe the payload's JSON into stdin")
		}
		if raw, err = io.ReadAll(cmd.InOrStdin()); err != nil {
			return nil, fmt.Errorf("--payload -: %w", err)
		}
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("--payload is not JSON: %s", oneLine(string(raw), 60))
	}
	return json.RawMessage(raw), nil
}

// request is old (nil to create) changed by the flags given.
func (s *scheduleFlags) request(cmd *cobra.Command, old *client.Schedule, payload json.RawMessage) client.ScheduleRequest {
	var r client.ScheduleRequest
	if old != nil {
		r = client.ScheduleRequest{Name: old.Name, Queue: old.Queue, Cron: old.Cron, Timezone: old.Timezone,
			Payload: old.Payload, Priority: old.Priority, Enabled: &old.Enabled}
		if old.UniqueKey != nil {
			r.UniqueKey = *old.UniqueKey
		}
		if !old.MaxRetriesDefault {
			n := old.MaxRetries
			r.MaxRetries = &n
		}
	}
	given := cmd.Flags().Changed
	set := func(flag string, to *string, v string) {
		if given(flag) {
			*to = v
		}
	}
	set("name", &r.Name, s.name)
	set("queue", &r.Queue, s.queue)
	set("cron", &r.Cron, s.cron)
	set("timezone", &r.Timezone, s.timezone)
	set("priority", &r.Priority, s.priority)
	set("unique-key", &r.UniqueKey, s.uniqueKey)
	if payload != nil {
		r.Payload = payload
	}
	if r.Payload == nil {
		r.Payload = json.RawMessage(`{}`)
	}
	if given("max-retries") {
		r.MaxRetries = &s.maxRetries
	}
	if given("enabled") || old == nil {
		r.Enabled = &s.enabled
	}
	return r
}

func scheduleCreateCmd(api *Conn) *cobra.Command {
	var s scheduleFlags
	cmd := &cobra.Command{
		Use:   "create --name <name> --queue <queue> --cron <expr>",
		Short: "Create a cron schedule",
		Long: `create makes a cron schedule: every time --cron matches in --timezone, one
job with --payload goes to --queue.

  jobbie schedules create --name nightly-report --queue reports --cron '0 2 * * *' --timezone Europe/Paris \
    --payload '{"kind":"daily"}' --priority high --unique-key nightly --max-retries 2`,
		Args: exactArgs(0),
	}
	s.register(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		for _, req := range []string{"name", "queue", "cron"} {
			if !cmd.Flags().Changed(req) {
				return fmt.Errorf("--%s is required", req)
			}
		}
		payload, err := s.check(cmd)
		if err != nil {
			return err
		}
		req := s.request(cmd, nil, payload)
		return runAPI(cmd, api, "create schedule", tenancy.ActScheduleManage,
			func(ctx context.Context, c *client.Client) (*client.Schedule, error) {
				return c.CreateSchedule(ctx, req)
			},
			func(w io.Writer, sc *client.Schedule) error { return printSchedules(w, []client.Schedule{*sc}) })
	}
	return cmd
}

func scheduleUpdateCmd(api *Conn) *cobra.Command {
	var s scheduleFlags
	cmd := &cobra.Command{
		Use:   "update <id-or-name>",
		Short: "Change a schedule's fields; what the flags leave out is kept",
		Long: `update reads the schedule, changes the fields the flags give, and replaces it
(PUT /api/v1/schedules/{id}); its next run is computed afresh.

  jobbie schedules update nightly-report --cron '30 2 * * *' --payload '{"kind":"daily","v":2}'
  jobbie schedules update sch_01… --enabled=false`,
		Args: exactArgs(1),
	}
	s.register(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := CheckID("schedule", args[0]); err != nil {
			return err
		}
		payload, err := s.check(cmd)
		if err != nil {
			return err
		}
		if !anyGiven(cmd, "name", "queue", "cron", "timezone", "payload", "priority",
			"unique-key", "max-retries", "enabled") {
			return fmt.Errorf("nothing to change: give --name, --queue, --cron, --timezone, --payload, --priority, --unique-key, --max-retries or --enabled")
		}
		return runAPI(cmd, api, "schedule "+args[0], tenancy.ActScheduleManage,
			func(ctx context.Context, c *client.Client) (*client.Schedule, error) {
				old, err := c.GetSchedule(ctx, args[0])
				if err != nil {
					return nil, err
				}
				return c.UpdateSchedule(ctx, old.ID, s.request(cmd, old, payload))
			},
			func(w io.Writer, sc *client.Schedule) error { return printSchedules(w, []client.Schedule{*sc}) })
	}
	return cmd
}

// anyGiven reports whether the command line gave any of the flags.
func anyGiven(cmd *cobra.Command, names ...string) bool {
	for _, n := range names {
		if cmd.Flags().Changed(n) {
			return true
		}
	}
	return false
}

package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// A queue's push settings from the command line (`jobbie queues set` and
// `create`, with the other settings of queue_settings.go), and the rows
// `jobbie queues get` shows for them.

// pushFlags are `queues set`'s flags; only those given change the queue.
type pushFlags struct {
	url, mode    string
	timeout      time.Duration
	maxInFlight  int
	headers      []string
	clearHeaders bool
	noPush       bool
	enable       bool
}

func queueSetCmd(api *Conn) *cobra.Command {
	var p pushFlags
	var st settingsFlags
	cmd := &cobra.Command{
		Use:   "set <name>",
		Short: "Change a queue's settings and push settings; what the flags leave out is kept",
		Long: `set changes a queue's settings (description, paused, concurrency, per-key
concurrency, throttle, job defaults, payload schema), makes it a push
queue, changes its push settings, or makes it a pull queue again. It reads the queue's
configuration, changes what the flags give, and declares the queue with it
(PUT /api/v1/queues/{name}); a queue that does not exist yet is created.
Any push change enables push again on a queue whose handler answered 410
Gone; --push-enable does only that.

  jobbie queues set emails.send --concurrency 20 --throttle 100/1m --max-retries 5 --retention 72h
  jobbie queues set emails.send --no-throttle --no-concurrency --no-defaults
  jobbie queues set payments --schema-file payment.schema.json
  jobbie queues set payments --remove-schema
  jobbie queues set emails.send --push-url https://hooks.example.com/jobs --push-header 'Authorization=Bearer s3cret'
  jobbie queues set emails.send --push-mode when_no_workers --push-timeout 1m --push-max-in-flight 50
  jobbie queues set emails.send --no-push`,
		Args: exactArgs(1),
	}
	st.register(cmd.Flags())
	p.register(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		name := args[0]
		if err := tenancy.ValidateQueue(name); err != nil {
			return err
		}
		if err := st.check(cmd); err != nil {
			return err
		}
		push := p.any(cmd)
		switch {
		case push:
			if err := p.check(cmd); err != nil {
				return err
			}
		case len(st.given(cmd)) == 0:
			return fmt.Errorf("nothing to change: give a setting (--concurrency, --throttle, --max-retries, …), --push-url and the other --push-* flags, or --no-push")
		}
		return runAPI(cmd, api, "queue "+name, tenancy.ActQueueManage,
			func(ctx context.Context, c *client.Client) (*client.Queue, error) {
				spec, err := currentSpec(ctx, c, name)
				if err != nil {
					return nil, err
				}
				st.apply(cmd, &spec)
				if push {
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

// register adds the push flags to f.
func (p *pushFlags) register(f *pflag.FlagSet) {
	f.StringVar(&p.url, "push-url", "", "the https URL Jobbie POSTs each job to (makes the queue a push queue)")
	f.StringVar(&p.mode, "push-mode", "", `"always" (every job by push) or "when_no_workers" (push only while no worker fetches)`)
	f.DurationVar(&p.timeout, "push-timeout", 0, "how long one delivery may take, 1s to 15m (default 30s)")
	f.IntVar(&p.maxInFlight, "push-max-in-flight", 0, "deliveries at once, 1 to 1000 (default 10)")
	f.StringArrayVar(&p.headers, "push-header", nil, "a header sent with every delivery, as Name=value; repeat for more; replaces the queue's headers")
	f.BoolVar(&p.clearHeaders, "push-clear-headers", false, "send no headers of the queue's own")
	f.BoolVar(&p.noPush, "no-push", false, "make the queue a pull queue: remove its push settings")
	f.BoolVar(&p.enable, "push-enable", false, "enable push again after a handler answered 410 Gone, changing nothing else")
}

// any reports whether the command line gave a push flag.
func (p *pushFlags) any(cmd *cobra.Command) bool {
	return p.noPush || len(p.given(cmd)) > 0
}

// given lists the --push-* flags the command line gave.
func (p *pushFlags) given(cmd *cobra.Command) []string {
	var given []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if strings.HasPrefix(f.Name, "push-") {
			given = append(given, "--"+f.Name)
		}
	})
	return given
}

// check refuses contradictory or empty flags before anything is sent.
func (p *pushFlags) check(cmd *cobra.Command) error {
	given := p.given(cmd)
	switch {
	case p.noPush && len(given) > 0:
		return fmt.Errorf("--no-push removes push: it cannot go with %s", strings.Join(given, ", "))
	case !p.noPush && len(given) == 0:
		return fmt.Errorf("nothing to change: give --push-url and the other --push-* flags, or --no-push")
	case p.clearHeaders && len(p.headers) > 0:
		return fmt.Errorf("--push-clear-headers cannot go with --push-header")
	}
	for _, h := range p.headers {
		if k, _, ok := strings.Cut(h, "="); !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("--push-header %q: want Name=value", h)
		}
	}
	return nil
}

// currentSpec is the queue's configuration as a spec; an empty one for a
// queue that does not exist yet.
func currentSpec(ctx context.Context, c *client.Client, name string) (client.QueueSpec, error) {
	q, err := c.GetQueue(ctx, name)
	if client.IsNotFound(err) {
		return client.QueueSpec{}, nil
	}
	if err != nil {
		return client.QueueSpec{}, err
	}
	return client.QueueSpecOf(q)
}

// apply changes spec by the flags given.
func (p *pushFlags) apply(cmd *cobra.Command, spec *client.QueueSpec) error {
	if p.noPush {
		spec.Push = nil
		return nil
	}
	given := cmd.Flags().Changed
	if spec.Push == nil {
		if !given("push-url") {
			return fmt.Errorf("the queue is a pull queue: --push-url is needed to make it a push queue")
		}
		spec.Push = &client.QueuePushSpec{}
	}
	s := spec.Push
	if given("push-url") {
		s.URL = p.url
	}
	if given("push-mode") {
		s.Mode = p.mode
	}
	if given("push-timeout") {
		s.Timeout = p.timeout
	}
	if given("push-max-in-flight") {
		s.MaxInFlight = p.maxInFlight
	}
	if p.clearHeaders {
		s.Headers = nil
	}
	if len(p.headers) > 0 {
		s.Headers = map[string]string{}
		for _, h := range p.headers {
			k, v, _ := strings.Cut(h, "=")
			s.Headers[strings.TrimSpace(k)] = v
		}
	}
	return nil
}

// printPush adds a push queue's rows to a queue's table: its settings,
// its headers' names (their values may be secrets; -o json shows them)
// and why push is disabled, if it is.
func printPush(w io.Writer, p *client.QueuePush) {
	if p == nil {
		fmt.Fprintf(w, "DELIVERY\tpull\n")
		return
	}
	fmt.Fprintf(w, "DELIVERY\tpush to %s (%s, timeout %s, at most %d in flight)\n", p.URL, p.Mode, p.Timeout, p.MaxInFlight)
	if len(p.Headers) > 0 {
		fmt.Fprintf(w, "PUSH HEADERS\t%s\n", strings.Join(slices.Sorted(maps.Keys(p.Headers)), ", "))
	}
	if d := p.Disabled; d != nil {
		fmt.Fprintf(w, "PUSH DISABLED\tsince %s: %s (`jobbie queues set <name> --push-enable` enables it again)\n",
			d.At.UTC().Format(time.RFC3339), oneLine(d.Reason, 200))
	}
}

// Command embedded is Jobbie inside a Go program: it enqueues jobs,
// delays one and schedules one every second, and works them, all in one
// process, on a data directory of its own (package embedded). Given a URL
// and a key it does the same against a `jobbie dev` or the hosted
// service: connect is the only code that differs.
//
//	go run ./examples/embedded -dir ./embedded-data           # embedded
//	go run ./examples/embedded -dir ./embedded-data -step produce
//	go run ./examples/embedded -dir ./embedded-data -step work # after a restart
//	go run ./examples/embedded -url http://127.0.0.1:8080 -key "$(cat jobbie-data/owner.key)"
//	go run ./examples/embedded -dir ./embedded-data -console 127.0.0.1:8080 -step serve # the console, until ^C
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/embedded"
)

func main() {
	dir := flag.String("dir", "./embedded-data", "the embedded node's data directory (without -url)")
	url := flag.String("url", "", "a Jobbie API to use instead of an embedded node: a jobbie dev's gateway, or the hosted service")
	key := flag.String("key", "", "the API key for -url")
	step := flag.String("step", "all", "produce (enqueue and schedule), work (work what is there), all (both), or serve (nothing: serve -console until interrupted)")
	jobs := flag.Int("jobs", 10, "jobs to enqueue")
	console := flag.String("console", "", "serve the API and the console at this host:port while the program runs, behind the owner key in <dir>/owner.key (without -url)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *dir, *url, *key, *step, *jobs, *console); err != nil {
		fmt.Fprintln(os.Stderr, "embedded:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir, url, key, step string, jobs int, console string) error {
	if console != "" && url != "" {
		return fmt.Errorf("-console serves an embedded node's console: not with -url")
	}
	c, closeFn, err := connect(ctx, dir, url, key, console)
	if err != nil {
		return err
	}
	defer closeFn()
	app := App{Client: c, Log: slog.Default()}
	switch step {
	case "produce":
		return app.Produce(ctx, jobs)
	case "work":
		seen, err := app.Work(ctx, Seen{Emails: jobs, Reminders: 1, Ticks: 1})
		fmt.Printf("worked %d emails, %d reminders, %d ticks\n", seen.Emails, seen.Reminders, seen.Ticks)
		return err
	case "all":
		if err := app.Produce(ctx, jobs); err != nil {
			return err
		}
		seen, err := app.Work(ctx, Seen{Emails: jobs, Reminders: 1, Ticks: 1})
		fmt.Printf("worked %d emails, %d reminders, %d ticks\n", seen.Emails, seen.Reminders, seen.Ticks)
		if err != nil {
			return err
		}
		return app.Unschedule(ctx)
	case "serve":
		if console == "" {
			return fmt.Errorf("-step serve serves -console: give its address")
		}
		<-ctx.Done()
		return nil
	}
	return fmt.Errorf("-step %q: want produce, work, all or serve", step)
}

// connect is the one place the program says where Jobbie runs: in the
// process on dir, or at url with key. Everything else is the same code.
// With console, the embedded node also serves its API and console there.
func connect(ctx context.Context, dir, url, key, console string) (*client.Client, func() error, error) {
	if url != "" {
		c := client.New(url, key)
		return c, func() error { c.CloseIdleConnections(); return nil }, nil
	}
	e, err := embedded.Open(ctx, embedded.Options{Dir: dir, Listen: console, Console: console != ""})
	if err != nil {
		return nil, nil, err
	}
	if console != "" {
		fmt.Printf("console: http://%s/console/ (sign in with the key in %s)\n", e.Addr(), filepath.Join(dir, "owner.key"))
	}
	return e.Client(), e.Close, nil
}

package main

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

const jobs = 5

// produceThenWork runs the example's produce step on one connection,
// closes it, and its work step on a second: every email is worked once,
// the delayed reminder and at least one scheduled tick come too.
func produceThenWork(t *testing.T, dir, url, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := slog.New(slog.DiscardHandler)

	c, closeFn, err := connect(ctx, dir, url, key, "")
	require.NoError(t, err)
	require.NoError(t, App{Client: c, Log: log}.Produce(ctx, jobs))
	require.NoError(t, closeFn())

	c, closeFn, err = connect(ctx, dir, url, key, "")
	require.NoError(t, err)
	defer closeFn()
	app := App{Client: c, Log: log}
	seen, err := app.Work(ctx, Seen{Emails: jobs, Reminders: 1, Ticks: 1})
	require.NoError(t, err)
	require.ElementsMatch(t, []int{0, 1, 2, 3, 4}, seen.EmailNs, "each email worked once")
	require.Equal(t, 1, seen.Reminders)
	require.NoError(t, app.Unschedule(ctx))
	_, err = c.GetSchedule(ctx, tickSchedule)
	require.True(t, client.IsNotFound(err), "%v", err)
}

// Jobs enqueued before Close are worked after the next Open on the same
// data directory; the schedule made before it goes on firing after it.
func TestEmbeddedSurvivesARestart(t *testing.T) {
	t.Parallel()
	produceThenWork(t, t.TempDir(), "", "")
}

// The program as a user runs it: everything in one run.
func TestEmbeddedRunsAll(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, run(ctx, t.TempDir(), "", "", "all", jobs, ""))
	require.ErrorContains(t, run(ctx, t.TempDir(), "", "", "neither", jobs, ""), "-step")
	require.ErrorContains(t, run(ctx, t.TempDir(), "", "", "serve", jobs, ""), "-console", "serve has nothing to serve without it")
	require.ErrorContains(t, run(ctx, "", "http://127.0.0.1:1", "k", "all", jobs, "127.0.0.1:0"), "-url", "a remote Jobbie's console is its own")
}

// The same code, pointed at a `jobbie dev` by its URL and owner key,
// passes the same checks: moving off the embedded node is the constructor.
func TestSameCodeAgainstJobbieDev(t *testing.T) {
	t.Parallel()
	url, key := startDev(t)
	produceThenWork(t, "", url, key)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, run(ctx, "", url, key, "all", jobs, ""))
}

// startDev starts `jobbie dev` (JOBBIE_BIN, else a build of ./cmd/jobbie)
// on ports of its choosing and returns its gateway's URL and owner key;
// the test's cleanup stops it.
func startDev(t testing.TB) (url, key string) {
	url, key, _ = startDevProc(t)
	return url, key
}

// startDevProc is startDev, with the process.
func startDevProc(t testing.TB) (url, key string, proc *os.Process) {
	t.Helper()
	bin := os.Getenv("JOBBIE_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "jobbie")
		build := exec.Command("go", "build", "-o", bin, "./cmd/jobbie")
		build.Dir = filepath.Join("..", "..")
		out, err := build.CombinedOutput()
		require.NoError(t, err, "go build ./cmd/jobbie: %s", out)
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "dev.log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	defer logFile.Close()
	cmd := exec.Command(bin, "dev", "--data-dir", filepath.Join(dir, "data"),
		"--addr", "127.0.0.1:0", "--control-addr", "127.0.0.1:0", "--shard-addr", "127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	gateway := regexp.MustCompile(`gateway \(public API\):\s+(http://\S+)`)
	deadline := time.Now().Add(90 * time.Second)
	for {
		out, _ := os.ReadFile(logPath)
		if m := gateway.FindSubmatch(out); m != nil && strings.Contains(string(out), "Try it") {
			url = string(m[1])
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("jobbie dev exited (%v):\n%s", err, out)
		default:
		}
		require.True(t, time.Now().Before(deadline), "jobbie dev did not say it is running:\n%s", out)
		time.Sleep(50 * time.Millisecond)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "data", "owner.key"))
	require.NoError(t, err)
	return url, strings.TrimSpace(string(raw)), cmd.Process
}

package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jobbie/jobbie/client"
)

// The subprocess worker's contract with the command it runs for each job
// (docs/cli.md, "Subprocess worker"): the payload on stdin, the job in
// the environment, the outcome in the exit status, stdout and stderr, and
// progress and checkpoints as JSON lines on file descriptor 3.

const (
	// ExitPermanent is the exit status that fails the job non-retryably
	// (EX_TEMPFAIL's number in sysexits.h, chosen because it is rarely
	// used by accident).
	ExitPermanent = 75
	// maxResult bounds the stdout kept as the result; more fails the attempt.
	maxResult = 1 << 20
	// stderrTail is how much of the end of stderr becomes the error.
	stderrTail = 4 << 10
	// killGrace is how long a child has between SIGTERM and SIGKILL.
	killGrace = 500 * time.Millisecond
	// ioGrace bounds the wait for the child's pipes once it has exited
	// (a process it started may hold them open).
	ioGrace = time.Second
	// maxReportLine bounds one line on file descriptor 3.
	maxReportLine = 1 << 20
)

// envelope is the job as JOBBIE_JOB holds it.
type envelope struct {
	ID          string            `json:"id"`
	Queue       string            `json:"queue"`
	Attempt     int               `json:"attempt"`
	MaxRetries  int               `json:"max_retries"`
	Tags        map[string]string `json:"tags,omitempty"`
	Checkpoint  json.RawMessage   `json:"checkpoint,omitempty"`
	LeaseMS     int64             `json:"lease_duration_ms,omitempty"`
	TraceParent string            `json:"traceparent,omitempty"`
	TraceState  string            `json:"tracestate,omitempty"`
}

// subproc runs argv for each job.
type subproc struct {
	argv    []string
	timeout time.Duration // 0: none
	stderr  io.Writer     // where the worker's own warnings go
	// running counts the handlers still running a child: the SDK's Run
	// returns once it has failed what a shutdown abandoned, before those
	// handlers finished killing their children, so the command waits.
	running sync.WaitGroup
}

// errTimedOut fails a child that ran past --timeout.
var errTimedOut = errors.New("timed out")

// handle is the client.Handler: it runs the child and turns its exit into
// the job's outcome.
func (s *subproc) handle(ctx context.Context, job *client.JobContext) (any, error) {
	s.running.Add(1)
	defer s.running.Done()
	env, err := json.Marshal(envelope{ID: job.ID, Queue: job.Queue, Attempt: job.Attempt, MaxRetries: job.MaxRetries,
		Tags: job.Tags, Checkpoint: job.LastCheckpoint, LeaseMS: job.LeaseDuration.Milliseconds(),
		TraceParent: job.TraceParent, TraceState: job.TraceState})
	if err != nil {
		return nil, err
	}
	reports, reportsW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer reports.Close()
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	// Its own process group, so a kill reaches what it started too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdin = bytes.NewReader(job.Payload)
	stdout := &capped{max: maxResult}
	stderr := &tail{max: stderrTail}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = []*os.File{reportsW} // file descriptor 3
	cmd.WaitDelay = ioGrace
	cmd.Env = append(os.Environ(), "JOBBIE_JOB="+string(env), "JOBBIE_JOB_ID="+job.ID,
		"JOBBIE_QUEUE="+job.Queue, "JOBBIE_ATTEMPT="+strconv.Itoa(job.Attempt))
	if err := cmd.Start(); err != nil {
		reportsW.Close()
		// Retryable: another worker's host may have what this one lacks.
		return nil, fmt.Errorf("start %s: %w", s.argv[0], err)
	}
	reportsW.Close()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		s.readReports(reports, job)
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	var deadline <-chan time.Time
	if s.timeout > 0 {
		t := time.NewTimer(s.timeout)
		defer t.Stop()
		deadline = t.C
	}
	var stopped error
	select {
	case err = <-waitDone:
	case <-ctx.Done():
		stopped = context.Cause(ctx)
		err = killGroup(cmd.Process.Pid, waitDone)
	case <-deadline:
		stopped = fmt.Errorf("%w after %s", errTimedOut, s.timeout)
		err = killGroup(cmd.Process.Pid, waitDone)
	}
	// The reports written before the exit count (a checkpoint before the
	// ack); a process the child left behind may hold the pipe open.
	select {
	case <-readDone:
	case <-time.After(ioGrace):
		reports.Close()
		<-readDone
	}
	if stopped != nil {
		return nil, fmt.Errorf("%w%s", stopped, stderrSuffix(stderr))
	}
	return outcome(err, stdout, stderr)
}

// outcome is the job's result or error from the child's exit.
func outcome(waitErr error, stdout *capped, stderr *tail) (any, error) {
	var exit *exec.ExitError
	switch {
	case waitErr == nil || errors.Is(waitErr, exec.ErrWaitDelay):
	case errors.As(waitErr, &exit):
		code := exit.ExitCode()
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = exit.String()
		} else {
			msg = fmt.Sprintf("%s: %s", exit, msg)
		}
		if code == ExitPermanent {
			return nil, client.Permanent(errors.New(msg))
		}
		return nil, errors.New(msg)
	default:
		return nil, waitErr
	}
	if stdout.over {
		return nil, fmt.Errorf("the result on stdout is over %d bytes", maxResult)
	}
	out := bytes.TrimSpace(stdout.buf.Bytes())
	if len(out) == 0 {
		return nil, nil
	}
	if json.Valid(out) {
		return json.RawMessage(out), nil
	}
	return stdout.buf.String(), nil
}

func stderrSuffix(stderr *tail) string {
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		return ": " + msg
	}
	return ""
}

// killGroup ends the child's process group: SIGTERM, then SIGKILL if the
// child has not exited within killGrace. It returns the child's Wait.
func killGroup(pid int, waitDone <-chan error) error {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	t := time.NewTimer(killGrace)
	defer t.Stop()
	select {
	case err := <-waitDone:
		_ = syscall.Kill(-pid, syscall.SIGKILL) // what it started and left
		return err
	case <-t.C:
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		return <-waitDone
	}
}

// report is one line on file descriptor 3.
type report struct {
	Progress   *client.Progress `json:"progress"`
	Checkpoint json.RawMessage  `json:"checkpoint"`
}

// readReports applies the child's progress and checkpoint lines until
// the pipe closes. A bad line is warned about and skipped: the job goes on.
func (s *subproc) readReports(r io.Reader, job *client.JobContext) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxReportLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rep report
		if err := json.Unmarshal(line, &rep); err != nil || (rep.Progress == nil && rep.Checkpoint == nil) {
			fmt.Fprintf(s.stderr, "jobbie worker: job %s: file descriptor 3: not a {\"progress\": …} or {\"checkpoint\": …} line: %.200s\n", job.ID, line)
			continue
		}
		if p := rep.Progress; p != nil {
			job.Progress(p.Current, p.Total, p.Message)
		}
		if rep.Checkpoint != nil {
			if err := job.Checkpoint(rep.Checkpoint); err != nil {
				fmt.Fprintf(s.stderr, "jobbie worker: job %s: checkpoint: %v\n", job.ID, err)
			}
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, os.ErrClosed) {
		fmt.Fprintf(s.stderr, "jobbie worker: job %s: file descriptor 3: %v\n", job.ID, err)
	}
	_, _ = io.Copy(io.Discard, r) // past a too-long line, so the child never blocks on a full pipe
}

// capped keeps the first max bytes written and notes whether more came.
type capped struct {
	max  int
	buf  bytes.Buffer
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.over = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

// tail keeps the last max bytes written.
type tail struct {
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.buf) }

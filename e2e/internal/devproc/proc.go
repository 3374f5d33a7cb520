// Package devproc starts the real jobbie binary for the end-to-end suites
// (e2e and e2e/console): a process whose output is kept in a log file and
// watched for the line that says it is ready, and on it `jobbie dev` on
// free loopback ports with its keys and operator client read from its data
// directory.
package devproc

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Proc is a started process whose stdout and stderr go, line by line and
// in order, to the file LogPath.
type Proc struct {
	Cmd     *exec.Cmd
	LogPath string
	// Grace is how long Stop waits after SIGTERM before it kills.
	Grace  time.Duration
	ready  chan struct{}
	exited chan struct{}
}

// Start starts cmd with its output appended to logPath, and marks it
// ready at the first line that contains ready ("" for never).
func Start(cmd *exec.Cmd, logPath, ready string) (*Proc, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	// A pipe of its own rather than StdoutPipe: Wait closes that one as
	// soon as the process exits, losing the lines still in it.
	out, w, err := os.Pipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = w, w // one stream, in order
	err = cmd.Start()
	w.Close()
	if err != nil {
		out.Close()
		logf.Close()
		return nil, err
	}
	p := &Proc{Cmd: cmd, LogPath: logPath, Grace: 20 * time.Second, ready: make(chan struct{}), exited: make(chan struct{})}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		signalled := ready == ""
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if !signalled && strings.Contains(sc.Text(), ready) {
				signalled = true
				close(p.ready)
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() {
		_ = cmd.Wait()
		// The last lines, unless a child it left holds the pipe open.
		select {
		case <-copied:
		case <-time.After(2 * time.Second):
		}
		out.Close()
		<-copied
		logf.Close()
		close(p.exited)
	}()
	return p, nil
}

// Exited is closed once the process has exited.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// WaitReady waits for the ready line; an error, naming the log and its
// last lines, when the process exits first or within passes.
func (p *Proc) WaitReady(within time.Duration) error {
	select {
	case <-p.ready:
		return nil
	case <-p.exited:
		return fmt.Errorf("%s exited before it was ready; see %s:\n%s", p.name(), p.LogPath, p.LogTail(20))
	case <-time.After(within):
		return fmt.Errorf("%s not ready after %s; see %s:\n%s", p.name(), within, p.LogPath, p.LogTail(20))
	}
}

func (p *Proc) name() string {
	return strings.Join(p.Cmd.Args[:min(2, len(p.Cmd.Args))], " ")
}

// Stop ends the process gracefully (SIGTERM, SIGKILL after Grace) and
// waits for it; once it has exited, it does nothing.
func (p *Proc) Stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(p.Grace):
		_ = p.Cmd.Process.Kill()
		<-p.exited
	}
}

// Kill ends the process with SIGKILL, as a crash would, and waits for it.
func (p *Proc) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.exited
}

// Count is how many lines of the log contain s.
func (p *Proc) Count(s string) int {
	b, _ := os.ReadFile(p.LogPath)
	n := 0
	for l := range strings.SplitSeq(string(b), "\n") {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// LogTail is the last n lines of the log.
func (p *Proc) LogTail(n int) string {
	b, _ := os.ReadFile(p.LogPath)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Binary is $JOBBIE_BIN, or else cmd/jobbie built into dir.
func Binary(dir string) (string, error) {
	if bin := os.Getenv("JOBBIE_BIN"); bin != "" {
		return bin, nil
	}
	bin := filepath.Join(dir, "jobbie")
	build := exec.Command("go", "build", "-o", bin, "github.com/jobbie/jobbie/cmd/jobbie")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build jobbie: %w", err)
	}
	return bin, nil
}

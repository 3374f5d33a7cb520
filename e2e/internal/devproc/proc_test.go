package devproc

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A process that prints its ready line is ready, its output (stderr too)
// is in the log in order, and Stop ends it with SIGTERM.
func TestStartWaitsForTheReadyLineAndKeepsTheLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "p.log")
	p, err := Start(exec.Command("sh", "-c", `echo one; echo two >&2; echo "it is up"; exec sleep 60`), log, "is up")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if err := p.WaitReady(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got := p.LogTail(3); got != "one\ntwo\nit is up" {
		t.Fatalf("log tail %q", got)
	}
	if n := p.Count("o"); n != 2 {
		t.Fatalf("Count(o) = %d, want 2", n)
	}
	p.Stop()
	select {
	case <-p.Exited():
	default:
		t.Fatal("Stop returned before the process exited")
	}
	p.Stop() // once exited, nothing to do
}

// A process that exits before its ready line is an error naming its log.
func TestWaitReadyFailsWhenTheProcessExitsFirst(t *testing.T) {
	log := filepath.Join(t.TempDir(), "p.log")
	p, err := Start(exec.Command("sh", "-c", "echo no such flag >&2; exit 2"), log, "ready")
	if err != nil {
		t.Fatal(err)
	}
	err = p.WaitReady(30 * time.Second)
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "no such flag") {
		t.Fatalf("WaitReady: %v", err)
	}
}

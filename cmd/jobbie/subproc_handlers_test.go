package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The handlers `jobbie worker` runs in its tests, one in sh and one in
// Python, with the same modes, chosen by the payload's "mode":
//   ack        prints a JSON result holding $JOBBIE_JOB and the env vars
//   flaky      fails its first attempt (stderr, exit 3), then prints text
//   permanent  fails with exit 75
//   progress   reports progress and a checkpoint on fd 3, then waits for
//              <dir>/<job>.go before it acks
//   hang       starts a grandchild and waits for ever (Python's ignores
//              SIGTERM, so only SIGKILL ends it)
//   hangonce   hangs on its first attempt, acks on later ones
//   release    waits for <dir>/release, then acks
// Each writes its pid to <dir>/<job>.pid, and a grandchild's to
// <dir>/<job>.grandpid. $WORKER_TAG (set on the worker) names who ran it.

const shHandler = `#!/bin/sh
set -u
d=$HANDLER_DIR
id=$JOBBIE_JOB_ID
echo $$ > "$d/$id.pid.tmp" && mv "$d/$id.pid.tmp" "$d/$id.pid"
mode=$(sed -n 's/.*"mode" *: *"\([a-z]*\)".*/\1/p')
hang() {
	sleep 600 &
	echo $! > "$d/$id.grandpid.tmp" && mv "$d/$id.grandpid.tmp" "$d/$id.grandpid"
	wait
}
case $mode in
ack)
	printf '{"handler":"sh","tag":"%s","id":"%s","queue":"%s","attempt":%s,"job":%s}\n' \
		"$WORKER_TAG" "$JOBBIE_JOB_ID" "$JOBBIE_QUEUE" "$JOBBIE_ATTEMPT" "$JOBBIE_JOB" ;;
flaky)
	if [ "$JOBBIE_ATTEMPT" -lt 2 ]; then
		echo "some output"
		echo "flaky failure on attempt $JOBBIE_ATTEMPT" >&2
		exit 3
	fi
	echo "recovered on attempt $JOBBIE_ATTEMPT" ;;
permanent)
	echo "bad input: no such customer" >&2
	exit 75 ;;
progress)
	echo '{"progress":{"current":3,"total":10,"message":"three of ten"}}' >&3
	echo '{"checkpoint":{"step":3}}' >&3
	while [ ! -e "$d/$id.go" ]; do sleep 0.05; done
	echo '{"done":true}' ;;
hang)
	hang ;;
hangonce)
	if [ "$JOBBIE_ATTEMPT" -lt 2 ]; then hang; fi
	printf '{"tag":"%s"}\n' "$WORKER_TAG" ;;
release)
	while [ ! -e "$d/release" ]; do sleep 0.05; done
	printf '{"tag":"%s"}\n' "$WORKER_TAG" ;;
*)
	echo "unknown mode $mode" >&2
	exit 75 ;;
esac
`

const pyHandler = `#!/usr/bin/python3
import json, os, signal, subprocess, sys, time

d = os.environ["HANDLER_DIR"]
jid = os.environ["JOBBIE_JOB_ID"]
attempt = int(os.environ["JOBBIE_ATTEMPT"])
tag = os.environ["WORKER_TAG"]

def put(name, value):
    with open(os.path.join(d, name + ".tmp"), "w") as f:
        f.write(str(value))
    os.rename(os.path.join(d, name + ".tmp"), os.path.join(d, name))

def hang():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen(["sleep", "600"])
    put(jid + ".grandpid", child.pid)
    child.wait()
    time.sleep(600)

def wait_for(name):
    while not os.path.exists(os.path.join(d, name)):
        time.sleep(0.05)

put(jid + ".pid", os.getpid())
mode = json.load(sys.stdin)["mode"]
if mode == "ack":
    json.dump({"handler": "python", "tag": tag, "id": jid, "queue": os.environ["JOBBIE_QUEUE"],
               "attempt": attempt, "job": json.loads(os.environ["JOBBIE_JOB"])}, sys.stdout)
elif mode == "flaky":
    if attempt < 2:
        print("some output")
        print("flaky failure on attempt %d" % attempt, file=sys.stderr)
        sys.exit(3)
    print("recovered on attempt %d" % attempt)
elif mode == "permanent":
    print("bad input: no such customer", file=sys.stderr)
    sys.exit(75)
elif mode == "progress":
    with os.fdopen(3, "w") as reports:
        reports.write(json.dumps({"progress": {"current": 3, "total": 10, "message": "three of ten"}}) + "\n")
        reports.write(json.dumps({"checkpoint": {"step": 3}}) + "\n")
        reports.flush()
        wait_for(jid + ".go")
    print(json.dumps({"done": True}))
elif mode == "hang":
    hang()
elif mode == "hangonce":
    if attempt < 2:
        hang()
    print(json.dumps({"tag": tag}))
elif mode == "release":
    wait_for("release")
    print(json.dumps({"tag": tag}))
else:
    print("unknown mode " + mode, file=sys.stderr)
    sys.exit(75)
`

// writeHandler writes the handler in lang ("sh" or "python") to a new
// directory, which also takes its pid files, and returns its path.
func writeHandler(t *testing.T, lang string) string {
	t.Helper()
	src, name := shHandler, "handler.sh"
	if lang == "python" {
		src, name = pyHandler, "handler.py"
	}
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(src), 0o755))
	return path
}

// execEnv, set, makes the test binary run as jobbie (TestMain), so a test
// can run `jobbie worker` as a process of its own and signal it.
const execEnv = "JOBBIE_TEST_RUN_MAIN"

// workerProc is a `jobbie worker` process.
type workerProc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan error
}

func (w *workerProc) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stderr.Write(p)
}

func (w *workerProc) log() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stderr.String()
}

// startWorker runs `jobbie worker args…` against d with the owner key,
// with HANDLER_DIR and WORKER_TAG in its environment. The test's end
// kills it if it still runs.
func (d *devCLI) startWorker(t *testing.T, dir, tag string, args ...string) *workerProc {
	t.Helper()
	argv := append([]string{"worker", "--url", d.gateway, "--key-file", d.ownerFile}, args...)
	w := &workerProc{cmd: exec.Command(os.Args[0], argv...), done: make(chan error, 1)}
	w.cmd.Env = append(os.Environ(), execEnv+"=1", "HANDLER_DIR="+dir, "WORKER_TAG="+tag)
	w.cmd.Stdout, w.cmd.Stderr = w, w
	require.NoError(t, w.cmd.Start())
	go func() { w.done <- w.cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-w.done:
		default:
			_ = w.cmd.Process.Kill()
			<-w.done
		}
		if t.Failed() {
			t.Logf("worker %s said:\n%s", tag, w.log())
		}
	})
	return w
}

// stop sends SIGTERM and waits for the worker to exit; it must exit 0.
func (w *workerProc) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-w.done:
		require.NoError(t, err, w.log())
		w.done <- err // for the cleanup
	case <-time.After(2 * time.Minute):
		t.Fatalf("jobbie worker did not exit within 2 minutes of SIGTERM:\n%s", w.log())
	}
}

// readPid waits for the pid file name in dir.
func readPid(t *testing.T, dir, name string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, time.Minute, 20*time.Millisecond, "no %s", name)
	return pid
}

// alive reports whether process pid runs (a zombie does not: an
// orphan's may wait for a reaper that never comes in a container).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command's closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

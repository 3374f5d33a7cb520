package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// A poison job kills its worker on every attempt: the worker process dies
// holding the lease, every time. Each lost lease uses up an attempt, so
// with max_retries 2 the job ends dead after three, instead of looping
// forever.
func TestPoisonJobEndsDead(t *testing.T) {
	t.Parallel()
	worker := filepath.Join(t.TempDir(), "poisonworker")
	build := exec.Command("go", "build", "-o", worker, "./testdata/poisonworker")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build the poison worker: %s", out)

	c, ct := shared.tenant(t)
	res, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "poison", Payload: "crash", MaxRetries: new(2)})
	require.NoError(t, err)
	for attempt := 1; attempt <= 3; attempt++ {
		cmd := exec.Command(worker)
		cmd.Env = append(os.Environ(), "JOBBIE_URL="+shared.gateway, "JOBBIE_KEY="+ct.OwnerKey, "JOBBIE_QUEUE=poison",
			fmt.Sprintf("JOBBIE_WORKER_ID=poisoned-%d", attempt))
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		line, err := readLine(stdout, 20*time.Second)
		require.NoError(t, err, "worker %d never started the job", attempt)
		require.Equal(t, fmt.Sprintf("started %s %d", res.JobID, attempt), line)
		require.NoError(t, cmd.Process.Kill()) // the job "crashes" its worker
		_ = cmd.Wait()
		want := client.StatePending
		if attempt == 3 {
			want = client.StateDead
		}
		eventually(t, 15*time.Second, func() bool {
			d, err := c.GetJob(ctx(t), res.JobID)
			return err == nil && d.State == want
		}, fmt.Sprintf("after attempt %d the job is %s", attempt, want))
	}
	d, err := c.GetJob(ctx(t), res.JobID)
	require.NoError(t, err)
	require.Equal(t, "lease_expired", d.DeadReason)
	require.Equal(t, 3, d.Attempt)
	require.Len(t, d.Errors, 3)
	for i, e := range d.Errors {
		require.Equal(t, i+1, e.Attempt)
		require.Equal(t, "lease_expired", e.Error)
	}
	dead, err := c.ListDead(ctx(t), client.DeadQuery{Queue: "poison"})
	require.NoError(t, err)
	require.Len(t, dead.Jobs, 1)
	require.Equal(t, res.JobID, dead.Jobs[0].ID)
}

// readLine reads one line of r, or fails after d.
func readLine(r interface{ Read([]byte) (int, error) }, d time.Duration) (string, error) {
	got := make(chan string, 1)
	fail := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		if err != nil {
			fail <- err
			return
		}
		got <- strings.TrimSpace(line)
	}()
	select {
	case l := <-got:
		return l, nil
	case err := <-fail:
		return "", err
	case <-time.After(d):
		return "", fmt.Errorf("no line within %s", d)
	}
}

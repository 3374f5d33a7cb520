package e2e

import (
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// SIGTERM to `jobbie dev` with a worker's 30 s fetch waiting: the worker
// is answered at once with no job and the process exits within 5 s, inside
// Kubernetes' default 30 s grace (it waited out the fetch, 31 s, before).
func TestSIGTERMWithAWaitingFetchExitsWithinFiveSeconds(t *testing.T) {
	d, err := launch(filepath.Join(t.TempDir(), "dev"))
	require.NoError(t, err)
	t.Cleanup(d.stop)
	answered := make(chan int, 1)
	go func() {
		status, _ := ucDo("POST", d.gateway+"/api/v1/fetch", d.ownerKey,
			map[string]any{"queues": []string{"nothing.here"}, "worker_id": "w1", "timeout": 30}, nil)
		answered <- status
	}()
	// The fetch is waiting once the gateway counts it among its long-polls.
	eventually(t, 20*time.Second, func() bool { return scrapeMetricVia(t, d.ops, d.metrics, "jobbie_gateway_long_polls") >= 1 }, "the fetch waits")

	began := time.Now()
	require.NoError(t, d.Cmd.Process.Signal(syscall.SIGTERM))
	select {
	case status := <-answered:
		require.Equal(t, http.StatusNoContent, status, "the waiting worker is answered with no job")
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting fetch was not answered within 10 s of SIGTERM")
	}
	select {
	case <-d.Exited():
	case <-time.After(20 * time.Second):
		t.Fatal("jobbie dev did not exit within 20 s of SIGTERM")
	}
	took := time.Since(began)
	t.Logf("SIGTERM to exit with a 30 s fetch waiting: %s", took.Round(10*time.Millisecond))
	require.Less(t, took, 5*time.Second)
}

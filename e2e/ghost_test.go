package e2e

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// A worker that long-polls through the gateway and goes away before a job
// comes (curl -m 2 …/fetch; a worker restarted mid-poll) is leased
// nothing that sticks: the next job goes to a live worker at once.

// workerSeen waits until the namespace lists worker id: its fetch reached
// the shard.
func workerSeen(t *testing.T, c *client.Client, id string) {
	t.Helper()
	eventually(t, 10*time.Second, func() bool {
		ws, err := c.ListWorkers(ctx(t))
		return err == nil && slices.ContainsFunc(ws, func(w client.WorkerInfo) bool { return w.ID == id })
	}, "worker "+id+" seen")
}

func TestGhostLongPollLeasesNothing(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"/api/v1/fetch", "/api/v1/fetch/batch"} {
		t.Run(path, func(t *testing.T) {
			c, ct := shared.tenant(t)
			queue := "ghost." + strings.TrimPrefix(path, "/api/v1/")
			queue = strings.ReplaceAll(queue, "/", ".")
			u, err := url.Parse(shared.gateway)
			require.NoError(t, err)

			// The ghost: a raw connection that sends its fetch and hangs up,
			// as curl -m 2 does when its time is up.
			conn, err := net.Dial("tcp", u.Host)
			require.NoError(t, err)
			body := fmt.Sprintf(`{"queues":[%q],"worker_id":"ghost","timeout":30}`, queue)
			_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
				"Content-Length: %d\r\n\r\n%s", path, u.Host, ct.OwnerKey, len(body), body)
			require.NoError(t, err)
			workerSeen(t, c, "ghost")
			require.NoError(t, conn.Close())

			got := make(chan []string, 1)
			go func() {
				var ids []string
				if path == "/api/v1/fetch" {
					j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{queue}, WorkerID: "live", Timeout: 10 * time.Second})
					if err == nil && j != nil {
						ids = append(ids, j.ID)
					}
				} else {
					jobs, err := c.FetchBatch(ctx(t), client.FetchBatchRequest{Queues: []string{queue}, WorkerID: "live", Max: 5, Timeout: 10 * time.Second})
					if err == nil {
						for _, j := range jobs {
							ids = append(ids, j.ID)
						}
					}
				}
				got <- ids
			}()
			workerSeen(t, c, "live")

			start := time.Now()
			res, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: queue})
			require.NoError(t, err)
			ids := recvWithin(t, got, 10*time.Second)
			took := time.Since(start)
			require.Equal(t, []string{res.JobID}, ids, "the live worker gets the job")
			require.Less(t, took, time.Second, "within a second")
			d, err := c.GetJob(ctx(t), res.JobID)
			require.NoError(t, err)
			require.Equal(t, client.StateActive, d.State)
			require.Equal(t, "live", d.Worker.ID)
			require.Equal(t, 1, d.Attempt, "the ghost's attempt did not count")
			require.Empty(t, d.Errors)
			t.Logf("the live worker had the job %s after the enqueue; timeline %v", took.Round(time.Millisecond), timelineOf(d))
		})
	}
}

func timelineOf(d *client.JobDetail) []string {
	var out []string
	for _, e := range d.Timeline {
		out = append(out, e.Event)
	}
	return out
}

func recvWithin[T any](t *testing.T, ch <-chan T, d time.Duration) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("nothing within %s", d)
		panic("unreachable")
	}
}

package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
)

// TestSIGKILLUnderLoadLosesNothing enqueues and works jobs through the
// gateway, kills the server with SIGKILL mid-stream, restarts it on the same
// data directory, and checks that every job whose enqueue returned 201 is
// still there, and that no job was stored twice.
func TestSIGKILLUnderLoadLosesNothing(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "dev")
	srv, err := launch(dir)
	require.NoError(t, err)
	t.Cleanup(srv.stop)
	c := client.New(srv.gateway, srv.ownerKey)

	type sent struct {
		id  string
		seq int
	}
	var (
		mu       sync.Mutex
		accepted []sent
		acked    = map[string]bool{}
	)
	loadCtx, stopLoad := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for p := 0; p < 6; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; loadCtx.Err() == nil; i++ {
				seq := p*1_000_000 + i
				r, err := c.Enqueue(loadCtx, client.EnqueueRequest{Queue: "durable", Payload: map[string]int{"seq": seq}})
				if err != nil {
					continue // the kill: outcome unknown, not counted
				}
				mu.Lock()
				accepted = append(accepted, sent{r.JobID, seq})
				mu.Unlock()
			}
		}(p)
	}
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for loadCtx.Err() == nil {
				j, err := c.Fetch(loadCtx, client.FetchRequest{Queues: []string{"durable"}, WorkerID: "w", Timeout: time.Second, LeaseDuration: 2 * time.Second})
				if err != nil || j == nil {
					continue
				}
				if c.Ack(loadCtx, j.ID, nil) == nil {
					mu.Lock()
					acked[j.ID] = true
					mu.Unlock()
				}
			}
		}()
	}
	// Kill once a good number of enqueues were acknowledged.
	eventually(t, 30*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(accepted) >= 2000 }, "load running")
	srv.kill()
	stopLoad()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("accepted %d enqueues and %d acks before SIGKILL", len(accepted), len(acked))

	srv2, err := launchOn(dir, srv.ports())
	require.NoError(t, err)
	t.Cleanup(srv2.stop)
	c2 := client.New(srv2.gateway, srv2.ownerKey)

	states := map[string]int{}
	for _, s := range accepted {
		d, err := c2.GetJob(ctx(t), s.id)
		require.NoError(t, err, "job %s (seq %d) was acknowledged as enqueued and then lost", s.id, s.seq)
		var p struct{ Seq int }
		require.NoError(t, json.Unmarshal(d.Payload, &p))
		require.Equal(t, s.seq, p.Seq)
		if acked[s.id] {
			require.Equal(t, "completed", d.State, "acked job %s", s.id)
		}
		states[d.State]++
	}
	t.Logf("after restart: %v", states)

	// Drain what is left (leases of jobs active at the kill run out after
	// 2s) and check no seq is stored under two ids.
	bySeq := map[int]string{}
	for _, s := range accepted {
		bySeq[s.seq] = s.id
	}
	for {
		j, err := c2.Fetch(ctx(t), client.FetchRequest{Queues: []string{"durable"}, WorkerID: "drain", Timeout: 3 * time.Second})
		require.NoError(t, err)
		if j == nil {
			break
		}
		var p struct{ Seq int }
		require.NoError(t, json.Unmarshal(j.Payload, &p))
		if id, ok := bySeq[p.Seq]; ok {
			require.Equal(t, id, j.ID, "seq %d stored twice", p.Seq)
		}
		bySeq[p.Seq] = j.ID
		require.NoError(t, c2.Ack(ctx(t), j.ID, nil))
	}
	for _, s := range accepted {
		d, err := c2.GetJob(ctx(t), s.id)
		require.NoError(t, err)
		require.Equal(t, "completed", d.State, "job %s never completed", s.id)
	}
}

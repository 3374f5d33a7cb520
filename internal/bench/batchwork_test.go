package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRunBatchWorkerCalls(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		transport         string
		fetchBatch, acks  int
		wantFewerFetches  bool
		wantFewerAckCalls bool
	}{
		{TransportFast, 20, 20, true, true},
		{TransportStd, 20, 20, true, true},
		{TransportFast, 20, 1, true, false},
		{TransportFast, 1, 5, false, false},
		{TransportFast, 50, 7, true, true},
	} {
		t.Run(fmt.Sprintf("%s fetch %d ack %d", tc.transport, tc.fetchBatch, tc.acks), func(t *testing.T) {
			t.Parallel()
			f := newFakeShard(t, map[string]string{"Authorization": "Bearer k"})
			f.foreign(3)
			var out lines
			rep, err := Run(context.Background(), gatewayConfig(f, func(c *Config) {
				c.Transport, c.Batch, c.FetchBatch, c.AckBatch = tc.transport, 10, tc.fetchBatch, tc.acks
			}), &out)
			require.NoError(t, err)
			require.GreaterOrEqual(t, rep.Acked, int64(300))
			requireConsistent(t, f, rep, 3)
			require.Equal(t, tc.fetchBatch, rep.FetchBatch)
			require.Equal(t, tc.acks, rep.AckBatch)
			require.Contains(t, out.String(), fmt.Sprintf("workers (fetch batch %d, ack batch %d)", tc.fetchBatch, tc.acks))

			f.mu.Lock()
			fetchCalls, ackCalls := f.fetchCalls, f.ackCalls
			f.mu.Unlock()
			if tc.wantFewerFetches {
				require.Positive(t, fetchCalls)
				require.Less(t, int64(fetchCalls), rep.Delivered, "several jobs per fetch call")
			}
			if tc.wantFewerAckCalls {
				require.Less(t, int64(ackCalls), rep.Acked, "several jobs per ack call")
				require.LessOrEqual(t, rep.Acked, int64(ackCalls*tc.acks))
			} else {
				require.Equal(t, int64(ackCalls), rep.AckLatency.Count)
			}
		})
	}
}

func TestRunBatchAckCountsPerJobErrors(t *testing.T) {
	t.Parallel()
	f := newFakeShard(t, nil)
	f.foreign(5)
	f.refuseForeign = true
	rep, err := Run(context.Background(), gatewayConfig(f, func(c *Config) {
		c.Batch, c.FetchBatch, c.AckBatch = 10, 10, 10
	}), &lines{})
	require.NoError(t, err)
	require.Equal(t, int64(5), rep.Errors["lease_mismatch"], "each refused job is one error; the rest are acked")
	_, del, ack, _ := f.counts()
	require.Equal(t, int64(ack), rep.Acked)
	require.Equal(t, int64(del-5), rep.Acked)
}

func TestBatchBodies(t *testing.T) {
	t.Parallel()
	var ack struct {
		WorkerID string `json:"worker_id"`
		Acks     []struct {
			JobID string `json:"job_id"`
		} `json:"acks"`
	}
	require.NoError(t, json.Unmarshal(ackBatchBody(nil, `w"1`, []string{"job_1", "job_2"}), &ack))
	require.Equal(t, `w"1`, ack.WorkerID)
	require.Len(t, ack.Acks, 2)
	require.Equal(t, "job_2", ack.Acks[1].JobID)

	var fetch map[string]any
	require.NoError(t, json.Unmarshal(fetchBatchBody("q", "w", "h", 1500*1e6, 100), &fetch))
	require.Equal(t, float64(100), fetch["max"])
	require.Equal(t, 1.5, fetch["timeout"])
}

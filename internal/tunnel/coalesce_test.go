package tunnel

import (
	"bytes"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Writes arrive whole and in order; a reader that stops makes the writer
// wait once maxPending is queued, and closing ends that wait with an
// error rather than a hang.
func TestCoalescerOrderAndBackpressure(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	w := newCoalescer(a)
	var want bytes.Buffer
	for i := range 1000 {
		frame := bytes.Repeat([]byte{byte(i)}, 1+i%300)
		want.Write(frame)
		n, err := w.Write(frame)
		require.NoError(t, err)
		require.Equal(t, len(frame), n)
	}
	got := make([]byte, want.Len())
	_, err := io.ReadFull(b, got)
	require.NoError(t, err)
	require.Equal(t, want.Bytes(), got)

	// Nobody reads b now: the flusher blocks in its write, the queue
	// fills to maxPending, and the writer waits there.
	const chunk = 64 << 10
	var accepted atomic.Int64
	blocked := make(chan error, 1)
	go func() {
		buf := make([]byte, chunk)
		for {
			if _, err := w.Write(buf); err != nil {
				blocked <- err
				return
			}
			accepted.Add(chunk)
		}
	}()
	deadline := time.Now().Add(waitFor)
	for queued(w) < maxPending {
		require.True(t, time.Now().Before(deadline), "the queue never filled")
		time.Sleep(time.Millisecond)
	}
	// At most one batch in the stalled write and a full queue, each
	// overshooting by less than a chunk.
	require.LessOrEqual(t, accepted.Load(), int64(2*(maxPending+chunk)))
	select {
	case err := <-blocked:
		t.Fatalf("the writer stopped: %v", err)
	default:
	}
	require.NoError(t, w.Close())
	require.Error(t, <-blocked)
	_, err = w.Write([]byte("x"))
	require.Error(t, err)
	_ = b.Close()
}

func queued(w *coalescer) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

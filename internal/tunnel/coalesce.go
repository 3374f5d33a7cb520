package tunnel

import (
	"net"
	"sync"
)

// maxPending bounds what a coalescer holds unwritten; a writer beyond
// it waits, so a stalled link stops yamux's send loop (whose write
// timeout and keep-alive then end the session) instead of growing
// memory.
const maxPending = 256 << 10

// coalescer gathers a session's writes and writes them to the TLS
// connection from one goroutine, as few records as it can. yamux writes
// each frame's 12-byte header and its body separately, and a TLS record
// and a system call apiece would be most of a small request's cost;
// frames queued while a write is under way leave together in the next.
type coalescer struct {
	net.Conn
	mu      sync.Mutex
	wake    *sync.Cond // the flusher: data queued or closed; writers: room made or failed
	pending []byte
	err     error
	closed  bool
	done    chan struct{}
}

func newCoalescer(c net.Conn) *coalescer {
	w := &coalescer{Conn: c, done: make(chan struct{})}
	w.wake = sync.NewCond(&w.mu)
	go w.flush()
	return w
}

// Write queues b and returns; a failed earlier write fails it.
func (w *coalescer) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.pending) >= maxPending && w.err == nil && !w.closed {
		w.wake.Wait()
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, net.ErrClosed
	}
	w.pending = append(w.pending, b...)
	w.wake.Broadcast()
	return len(b), nil
}

func (w *coalescer) flush() {
	defer close(w.done)
	var out []byte
	for {
		w.mu.Lock()
		for len(w.pending) == 0 && !w.closed {
			w.wake.Wait()
		}
		if w.closed {
			w.mu.Unlock()
			return
		}
		out, w.pending = w.pending, out[:0]
		w.wake.Broadcast() // room for waiting writers
		w.mu.Unlock()
		if _, err := w.Conn.Write(out); err != nil {
			w.mu.Lock()
			w.err = err
			w.wake.Broadcast()
			w.mu.Unlock()
			return
		}
	}
}

// Close closes the connection (which ends a write under way) and waits
// for the flusher; what was still queued is dropped with it.
func (w *coalescer) Close() error {
	w.mu.Lock()
	w.closed = true
	w.wake.Broadcast()
	w.mu.Unlock()
	err := w.Conn.Close()
	<-w.done
	return err
}

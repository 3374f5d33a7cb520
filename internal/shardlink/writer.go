package shardlink

import (
	"bufio"
	"net"
	"sync"
	"time"
)

// writer is a link side's one writer: frames queue up while it writes,
// and it drains the queue into a buffered writer and flushes only once
// the queue is empty. So the more frames arrive at once, the more share
// each write system call.
type writer struct {
	conn    net.Conn
	bw      *bufio.Writer
	timeout time.Duration // bounds each batch's writes: a peer that stops reading ends the link

	mu     sync.Mutex
	queue  []frame
	closed bool
	wake   chan struct{}
}

// frame is one frame to write: its header and payload in buf, which the
// writer owns (and frees) once it is queued. A frame with an owner is
// written only if owner.take() says so, and then the owner is told when
// it left the queue: written (or partly), or dropped as the link ended.
type frame struct {
	buf   []byte
	owner owner
}

type owner interface {
	take() bool        // false: withdrawn, skip it (done is not called)
	done(written bool) // once, after it was written into the buffer or dropped
}

const writeBuffer = 64 << 10

func newWriter(conn net.Conn, timeout time.Duration) *writer {
	return &writer{conn: conn, bw: bufio.NewWriterSize(conn, writeBuffer), timeout: timeout, wake: make(chan struct{}, 1)}
}

// send queues f; false when the link ended (f was not taken: its owner
// is not told).
func (w *writer) send(f frame) bool {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return false
	}
	w.queue = append(w.queue, f)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return true
}

// run writes until stop closes (then it writes what is queued, once) or
// a write fails, then drops what is queued (and whatever is sent after).
// It returns the write's error, or nil after stop.
func (w *writer) run(stop <-chan struct{}) error {
	var batch []frame
	err := func() error {
		for {
			stopping := false
			select {
			case <-w.wake:
			case <-stop:
				stopping = true // what is queued is written first
			}
			for {
				w.mu.Lock()
				batch, w.queue = w.queue, batch[:0]
				w.mu.Unlock()
				if len(batch) == 0 {
					break
				}
				if w.timeout > 0 {
					_ = w.conn.SetWriteDeadline(time.Now().Add(w.timeout))
				}
				for i, f := range batch {
					if f.owner != nil && !f.owner.take() {
						putBuf(f.buf)
						continue
					}
					_, err := w.bw.Write(f.buf)
					putBuf(f.buf)
					if f.owner != nil {
						f.owner.done(true) // written, or partly: it may have reached the peer
					}
					if err != nil {
						dropAll(batch[i+1:])
						return err
					}
				}
				clear(batch)
			}
			if err := w.bw.Flush(); err != nil || stopping {
				return err
			}
		}
	}()
	w.mu.Lock()
	w.closed = true
	rest := w.queue
	w.queue = nil
	w.mu.Unlock()
	dropAll(rest)
	return err
}

func dropAll(fs []frame) {
	for _, f := range fs {
		putBuf(f.buf)
		if f.owner != nil {
			f.owner.done(false)
		}
	}
}

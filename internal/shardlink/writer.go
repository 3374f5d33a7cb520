package shardlink

import (
	"bufio"
	"net"
	"sync"
	"time"
)

// writer is a link side's writing: frames queue up while one goroutine
// writes, and that goroutine drains the queue into a buffered writer and
// flushes only once the queue is empty. So the more frames arrive at
// once, the more share each write system call; and a frame sent while no
// one writes is written by its sender at once, with no hand-over to
// another goroutine (unless others' frames keep coming: maxRounds).
type writer struct {
	conn    net.Conn
	bw      *bufio.Writer
	timeout time.Duration // bounds each batch's writes: a peer that stops reading ends the link
	fail    func(error)   // a write failed: the link ends

	mu           sync.Mutex
	idle         sync.Cond // signalled when busy ends
	queue, spare []frame
	busy         bool // a sender is writing the queue
	closed       bool
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

func newWriter(conn net.Conn, timeout time.Duration, fail func(error)) *writer {
	w := &writer{conn: conn, bw: bufio.NewWriterSize(conn, writeBuffer), timeout: timeout, fail: fail}
	w.idle.L = &w.mu
	return w
}

// send queues f, and writes the queue if no one else is writing it;
// false when the link ended (f was not taken: its owner is not told).
func (w *writer) send(f frame) bool {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return false
	}
	w.queue = append(w.queue, f)
	if w.busy {
		w.mu.Unlock()
		return true // the writing sender writes it
	}
	w.busy = true
	w.drain(maxRounds)
	return true
}

// maxRounds is how many batches a sender writes before it hands the
// writing over: a steady stream of others' frames would otherwise keep
// it from its own caller, whose answer (and deadline) waits.
const maxRounds = 4

// drain writes the queue until it is empty, at most rounds batches (<0:
// any) before a goroutine of its own takes over; w.mu is held and busy
// set, and w.mu is unlocked when it returns.
func (w *writer) drain(rounds int) {
	for i := 0; ; i++ {
		if i == rounds {
			w.mu.Unlock() // busy stays set: the queue is the new writer's
			go func() {
				w.mu.Lock()
				w.drain(-1)
			}()
			return
		}
		batch := w.queue
		w.queue = w.spare[:0]
		w.mu.Unlock()
		err := w.write(batch)
		clear(batch)
		w.mu.Lock()
		w.spare = batch[:0]
		if err == nil && (w.closed || len(w.queue) == 0) { // what was written goes out
			w.mu.Unlock()
			err = w.bw.Flush()
			w.mu.Lock()
		}
		switch {
		case err != nil:
			w.closeLocked()
			w.fail(err)
			return
		case w.closed, len(w.queue) == 0:
			w.busy = false
			w.idle.Broadcast()
			w.mu.Unlock()
			return
		}
	}
}

// write writes batch into the buffer; after an error it drops the rest.
func (w *writer) write(batch []frame) error {
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
	return nil
}

// close takes no more frames, waits for the sender writing (what it
// wrote is flushed) and drops what is still queued.
func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	for w.busy {
		w.idle.Wait()
	}
	w.closeLocked()
}

// closeLocked drops what is queued and takes no more frames; w.mu is
// held, and unlocked.
func (w *writer) closeLocked() {
	w.closed = true
	w.busy = false
	w.idle.Broadcast()
	rest := w.queue
	w.queue = nil
	w.mu.Unlock()
	dropAll(rest)
}

func dropAll(fs []frame) {
	for _, f := range fs {
		putBuf(f.buf)
		if f.owner != nil {
			f.owner.done(false)
		}
	}
}

package shardlink

import (
	"sync"
	"time"
)

// The node's limits beyond one link's: links open at once, requests in
// flight on all of them, and the keep-alives that tell a caller the node
// is still there.

// full reports whether MaxLinks links are open.
func (s *Server) full() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.links) >= s.cfg.MaxLinks
}

// keepAlive sends a keep-alive frame every KeepAlive while the link has
// requests in flight (a parked fetch answers only after its wait), until
// the returned stop is called.
func (l *link) keepAlive() (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(l.s.cfg.KeepAlive)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			if len(l.slots) == 0 {
				continue
			}
			buf := getBuf(headerSize)
			putHeader(buf, 0, 0, kindPing)
			if !l.w.send(frame{buf: buf}) {
				putBuf(buf)
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}

// acquire takes a slot of the link's and one of the node's for a
// request, waiting while either is at its bound; false when the link
// halted meanwhile.
func (l *link) acquire() bool {
	for _, slots := range []chan struct{}{l.slots, l.s.slots} {
		select {
		case slots <- struct{}{}:
		default:
			// At the bound: the caller broke the link's, or the node is at
			// its own; the link waits until a slot frees (its caller's
			// writes back up meanwhile).
			select {
			case slots <- struct{}{}:
			case <-l.quit:
				if slots == l.s.slots {
					<-l.slots
				}
				return false
			}
		}
	}
	return true
}

// release frees acquire's slots.
func (l *link) release() {
	<-l.s.slots
	<-l.slots
}

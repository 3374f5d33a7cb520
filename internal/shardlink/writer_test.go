package shardlink

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gatedConn's writes wait for the test's go-ahead.
type gatedConn struct {
	net.Conn
	entered chan struct{}
	proceed chan struct{}
}

func (g *gatedConn) Write(p []byte) (int, error) {
	g.entered <- struct{}{}
	<-g.proceed
	return len(p), nil
}

func (g *gatedConn) SetWriteDeadline(time.Time) error { return nil }

// A sender that found no one writing writes the queue, but not for ever:
// under a steady stream of other senders' frames it hands the writing
// over after a few batches and goes back to its own caller.
func TestASenderWritesOthersFramesForAWhileOnly(t *testing.T) {
	g := &gatedConn{entered: make(chan struct{}), proceed: make(chan struct{})}
	w := newWriter(g, 0, func(error) {})
	big := func() frame { return frame{buf: make([]byte, writeBuffer+1)} } // each goes to the connection
	first := make(chan struct{})
	go func() { w.send(big()); close(first) }()
	returned := false
	for range 100 {
		select {
		case <-first:
			returned = true
		default:
		}
		if returned {
			break
		}
		select {
		case <-first:
			returned = true
		case <-g.entered:
			require.True(t, w.send(big()), "queued behind the writing sender")
			g.proceed <- struct{}{}
		}
	}
	require.True(t, returned, "the first sender wrote 100 batches of others' frames and never went back to its caller")
	// The rest is written by the writer that took over, and the writer
	// closes once it is done.
	done := make(chan struct{})
	go func() { w.close(); close(done) }()
	for {
		select {
		case <-g.entered:
			g.proceed <- struct{}{}
			continue
		case <-done:
		}
		break
	}
}

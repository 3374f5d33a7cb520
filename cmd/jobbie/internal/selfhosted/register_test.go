package selfhosted

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeRegistrar answers each registration with the next of its answers
// and reports each call, and each look at its leadership.
type fakeRegistrar struct {
	leader  atomic.Bool
	looked  chan bool     // each IsLeader, with its answer
	calls   chan regCall  // each Register
	answers chan regReply // what Register answers, in turn
	changes chan struct{}
}

type regCall struct {
	url, last string
	capacity  uint64
}

type regReply struct {
	sig string
	err error
}

func (f *fakeRegistrar) IsLeader() bool {
	l := f.leader.Load()
	f.looked <- l
	return l
}

func (f *fakeRegistrar) Register(_ context.Context, url string, capacity uint64, last string) (string, error) {
	f.calls <- regCall{url: url, capacity: capacity, last: last}
	r := <-f.answers
	return r.sig, r.err
}

func (f *fakeRegistrar) Subscribe() (<-chan struct{}, func()) { return f.changes, func() {} }

// The leader registers at once and at each change, sending the signature
// of what it sent last; a failure is logged and the next registration
// sends everything again. A follower registers nothing.
func TestRegister(t *testing.T) {
	t.Parallel()
	f := &fakeRegistrar{looked: make(chan bool), calls: make(chan regCall), answers: make(chan regReply), changes: make(chan struct{})}
	f.leader.Store(true)
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Register(ctx, f, "https://control:8081", 7, slog.New(slog.NewTextHandler(logs, nil)))
	}()
	step := func(want regCall, reply regReply) {
		t.Helper()
		require.True(t, <-f.looked)
		require.Equal(t, want, <-f.calls)
		f.answers <- reply
	}
	step(regCall{url: "https://control:8081", capacity: 7}, regReply{sig: "sig1"})
	f.changes <- struct{}{}
	step(regCall{url: "https://control:8081", capacity: 7, last: "sig1"}, regReply{err: errors.New("control unreachable")})
	f.changes <- struct{}{}
	step(regCall{url: "https://control:8081", capacity: 7}, regReply{sig: "sig2"})
	require.Contains(t, logs.String(), "control unreachable")

	f.leader.Store(false)
	f.changes <- struct{}{}
	require.False(t, <-f.looked)
	select {
	case c := <-f.calls:
		t.Fatalf("a follower registered: %+v", c)
	default:
	}
	cancel()
	<-done
}

package gossip

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// got is one message a handler received.
type got struct {
	from string
	body []byte
}

// collect registers a handler of kind on p that forwards copies to the
// returned channel.
func collect(t *testing.T, p *Pool, kind Kind) (<-chan got, func()) {
	ch := make(chan got, 16)
	cancel := p.HandleMessages(kind, func(from string, body []byte) {
		select {
		case ch <- got{from, bytes.Clone(body)}:
		default:
			t.Errorf("handler channel full")
		}
	})
	t.Cleanup(cancel)
	return ch, cancel
}

func member(t *testing.T, p *Pool, name string) Member {
	for _, m := range p.Members() {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("%s is not a member seen by %s", name, p.Name())
	return Member{}
}

func TestMessagesReachTheirKindsHandlerWithTheSendersName(t *testing.T) {
	a, _, g := cluster(t)
	demand, _ := collect(t, g, KindRateDemand)
	other, _ := collect(t, g, Kind(200))

	require.NoError(t, a.Send(member(t, a, "g"), KindRateDemand, []byte("hello")))
	select {
	case m := <-demand:
		require.Equal(t, got{"a", []byte("hello")}, m)
	case <-time.After(10 * time.Second):
		t.Fatal("no message arrived")
	}
	// The largest body fits in a packet.
	big := bytes.Repeat([]byte{'x'}, a.MaxMessageBody())
	require.NoError(t, a.Send(member(t, a, "g"), Kind(200), big))
	select {
	case m := <-other:
		require.Equal(t, got{"a", big}, m)
	case <-time.After(10 * time.Second):
		t.Fatal("the largest message did not arrive")
	}
	require.Empty(t, demand, "a message goes to its own kind's handler only")
}

func TestSendRefusesBodiesOverOnePacket(t *testing.T) {
	a, _, _ := cluster(t)
	err := a.Send(member(t, a, "g"), KindRateDemand, make([]byte, a.MaxMessageBody()+1))
	require.True(t, errors.Is(err, ErrMessageTooLarge), "%v", err)
	require.Greater(t, a.MaxMessageBody(), 1000, "room for a useful report")
}

func TestReceiveDropsStrangersUnknownKindsAndCancelledHandlers(t *testing.T) {
	a, _, g := cluster(t)
	ch, cancel := collect(t, g, KindRateDemand)
	frame := func(kind Kind, from, body string) []byte {
		return append([]byte{byte(kind), byte(len(from))}, from+body...)
	}
	g.receive(frame(KindRateDemand, "nobody", "x"))  // not a member
	g.receive(frame(KindRateDemand, "g", "x"))       // itself
	g.receive(frame(Kind(9), "a", "x"))              // no handler
	g.receive([]byte{byte(KindRateDemand), 40, 'a'}) // truncated
	g.receive(nil)
	require.Empty(t, ch)

	g.receive(frame(KindRateDemand, "a", "x"))
	require.Equal(t, got{"a", []byte("x")}, <-ch)

	cancel()
	g.receive(frame(KindRateDemand, "a", "x"))
	require.Empty(t, ch)

	require.NoError(t, a.Shutdown())
	require.ErrorIs(t, a.Send(Member{Name: "g", Addr: g.Addr()}, KindRateDemand, nil), ErrClosed)
}

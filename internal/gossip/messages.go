package gossip

import (
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/memberlist"
)

// Messages: small datagrams one member sends another directly (not
// gossiped on), encrypted and authenticated with the pool's keys like all
// of its traffic. Delivery is best effort (UDP): a sender that needs its
// news to arrive sends it again, as a periodic report does anyway.
//
// The sender's name travels in the message and is checked against the
// live members: it is a claim as trustworthy as anything said in the
// pool, i.e. as the holders of its keys.

// Kind tells a message's receivers apart. Kinds are listed here so two
// users of one pool never share one.
type Kind byte

const (
	// KindRateDemand is a gateway's recent demand per rate-limited tenant
	// (gateway/limits/sync.go), signed by the gateway's certificate key
	// (gateway/limits/demand.go): the pool's key alone does not make a
	// sender a gateway.
	KindRateDemand Kind = 1
)

// messageOverhead is what a message costs in a packet besides its body
// and its sender's name: memberlist's user-message byte, its CRC (5), the
// AES-GCM framing of the keyring (29), and our kind and name length.
const messageOverhead = 1 + 5 + 29 + 2

// ErrMessageTooLarge is returned by Send for a body over MaxMessageBody.
var ErrMessageTooLarge = errors.New("gossip: message too large for one packet")

// messages holds the pool's message handlers.
type messages struct {
	mu       sync.RWMutex
	handlers map[Kind]func(from string, body []byte)
	udpSize  int // memberlist's UDPBufferSize
}

// HandleMessages makes fn receive the messages of kind, with the name of
// the member that sent them, replacing any handler of kind until cancel
// is called. fn runs on memberlist's packet goroutine: it must be quick,
// must not block and must copy body to keep it.
func (p *Pool) HandleMessages(kind Kind, fn func(from string, body []byte)) (cancel func()) {
	p.msgs.mu.Lock()
	if p.msgs.handlers == nil {
		p.msgs.handlers = map[Kind]func(string, []byte){}
	}
	p.msgs.handlers[kind] = fn
	p.msgs.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.msgs.mu.Lock()
			defer p.msgs.mu.Unlock()
			delete(p.msgs.handlers, kind)
		})
	}
}

// MaxMessageBody is the largest body Send takes: what fits in one packet.
func (p *Pool) MaxMessageBody() int {
	return p.msgs.udpSize - messageOverhead - len(p.name)
}

// Send sends a message of kind to member to (one of Members), best effort.
func (p *Pool) Send(to Member, kind Kind, body []byte) error {
	if p.closed.Load() {
		return ErrClosed
	}
	if len(p.name) > 255 {
		return fmt.Errorf("gossip: node name %q is too long to send messages (255 bytes at most)", p.name)
	}
	if len(body) > p.MaxMessageBody() {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrMessageTooLarge, len(body), p.MaxMessageBody())
	}
	msg := make([]byte, 0, 2+len(p.name)+len(body))
	msg = append(msg, byte(kind), byte(len(p.name)))
	msg = append(msg, p.name...)
	msg = append(msg, body...)
	if err := p.ml.SendToAddress(memberlist.Address{Addr: to.Addr, Name: to.Name}, msg); err != nil {
		return fmt.Errorf("gossip: send to %s: %w", to.Name, err)
	}
	return nil
}

// receive hands a message to its kind's handler, if its sender is a live
// member; anything else is dropped.
func (p *Pool) receive(msg []byte) {
	if len(msg) < 2 || len(msg) < 2+int(msg[1]) {
		return
	}
	kind, from, body := Kind(msg[0]), msg[2:2+int(msg[1])], msg[2+int(msg[1]):]
	p.msgs.mu.RLock()
	fn := p.msgs.handlers[kind]
	p.msgs.mu.RUnlock()
	if fn == nil {
		return
	}
	p.membersMu.RLock()
	_, live := p.members[string(from)]
	p.membersMu.RUnlock()
	if !live || string(from) == p.name {
		return
	}
	fn(string(from), body)
}

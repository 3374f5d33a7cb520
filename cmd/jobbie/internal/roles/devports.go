package roles

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
)

// devPorts hands out the loopback ports of a dev cluster's processes. All
// are picked before the first process starts, and the last binds its own
// many seconds later; so each port picked is held here (TCP and UDP:
// gossip takes both) until the process it is for starts. Until then no
// other pick, in this command or in another process on the machine, can
// take it.
type devPorts struct {
	mu    sync.Mutex
	taken map[string]bool // every address handed out or kept from an earlier run
	held  map[string][]interface{ Close() error }
}

func newDevPorts() *devPorts {
	return &devPorts{taken: map[string]bool{}, held: map[string][]interface{ Close() error }{}}
}

// keep marks an address given by the user or an earlier run as not to be
// handed out.
func (d *devPorts) keep(addr string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if addr != "" {
		d.taken[addr] = true
	}
}

// pick holds and returns a port free for TCP and UDP, between 21000 and
// 32000: below the kernel's ephemeral range (32768 and up on Linux), as an
// outgoing connection on the machine may take an ephemeral port as its
// source port and none takes one below; above the ports the end-to-end
// tests pick for processes they start themselves.
func (d *devPorts) pick() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for range 200 {
		addr := fmt.Sprintf("127.0.0.1:%d", 21000+rand.IntN(11000))
		if d.taken[addr] {
			continue
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		u, err := net.ListenPacket("udp", addr)
		if err != nil {
			_ = l.Close()
			continue
		}
		d.taken[addr] = true
		d.held[addr] = []interface{ Close() error }{l, u}
		return addr, nil
	}
	return "", errors.New("no free port on 127.0.0.1 between 21000 and 32000")
}

// release lets go of the given addresses, just before the process they are
// for binds them. An address not held is skipped.
func (d *devPorts) release(addrs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, a := range addrs {
		for _, c := range d.held[a] {
			_ = c.Close()
		}
		delete(d.held, a)
	}
}

// releaseAll lets go of every port still held.
func (d *devPorts) releaseAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for a, cs := range d.held {
		for _, c := range cs {
			_ = c.Close()
		}
		delete(d.held, a)
	}
}

// Package freeport picks loopback addresses for the jobbie processes the
// end-to-end suites start a moment later.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
)

// Ports come from [Low, High): below Linux's ephemeral range (32768 and
// up), because a port picked here is bound seconds later and in between
// an outgoing connection anywhere on the machine may take an ephemeral
// port as its source port; none takes one below it. `jobbie dev` picks
// its processes' ports from 21000 up, so a cluster a test starts never
// takes one a parallel test picked and has not bound yet.
const (
	Low  = 10000
	High = 21000
)

// given is every address handed out by this process: a test binds its
// ports only as it starts its processes, one after another, and a
// parallel test must not be given one of them in between.
var (
	mu    sync.Mutex
	given = map[string]bool{}
)

// Loopback picks n distinct 127.0.0.1 ports free for TCP and UDP (gossip
// takes both), never one handed out before by this process.
func Loopback(n int) ([]string, error) {
	mu.Lock()
	defer mu.Unlock()
	var out []string
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	for tries := 0; len(out) < n; tries++ {
		if tries == 1000 {
			return nil, fmt.Errorf("no %d free ports on 127.0.0.1 between %d and %d", n, Low, High)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", Low+rand.IntN(High-Low))
		if given[addr] {
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
		_ = u.Close()
		held = append(held, l)
		given[addr] = true
		out = append(out, addr)
	}
	return out, nil
}

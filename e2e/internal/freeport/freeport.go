// Package freeport picks loopback addresses for the jobbie processes the
// end-to-end suites start a moment later.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
)

// Loopback picks n distinct 127.0.0.1 ports free for TCP and UDP (gossip
// takes both), between 10000 and 32000: below Linux's ephemeral range
// (32768 and up), because a port picked here is bound seconds later and in
// between an outgoing connection anywhere on the machine may take an
// ephemeral port as its source port; none takes one below it.
func Loopback(n int) ([]string, error) {
	var out []string
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	for tries := 0; len(out) < n; tries++ {
		if tries == 1000 {
			return nil, fmt.Errorf("no %d free ports on 127.0.0.1 between 10000 and 32000", n)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", 10000+rand.IntN(22000))
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
		held = append(held, l) // held until all n are picked: no duplicates
		out = append(out, addr)
	}
	return out, nil
}

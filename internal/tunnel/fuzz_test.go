package tunnel

import (
	"crypto/tls"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

// frame is a yamux frame header (version 0, type, flags, stream id,
// length) and its body.
func frame(typ, flags uint16, stream, length uint32, body []byte) []byte {
	b := []byte{0, byte(typ)}
	b = binary.BigEndian.AppendUint16(b, flags)
	b = binary.BigEndian.AppendUint32(b, stream)
	b = binary.BigEndian.AppendUint32(b, length)
	return append(b, body...)
}

// FuzzAgentFrames: a node with a valid certificate that sends the gateway
// anything at all over its tunnel (yamux frames, or not) neither crashes
// the registry nor disturbs another node's tunnel, which serves on.
func FuzzAgentFrames(f *testing.F) {
	f.Add(frame(1, 1, 2, 0, nil))                                        // window update, SYN of a stream the server may not open
	f.Add(frame(2, 1, 0, 7, nil))                                        // ping
	f.Add(frame(0, 0, 1, 5, []byte("hello")))                            // data on a stream never opened
	f.Add(frame(0, 0, 1, 1<<31, nil))                                    // a length far over the window
	f.Add(frame(3, 0, 0, 2, nil))                                        // go away
	f.Add(append(frame(1, 2, 1, 1<<20, nil), frame(0, 4, 1, 0, nil)...)) // ack, then reset
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add([]byte{})

	ca := pkitest.New(f)
	h := startRegistry(f, ca.Creds(f, pkitest.Gateway), "127.0.0.1:0")
	good, _ := startAgent(f, ca.Creds(f, pkitest.Shard("s1", "n1")), h.addr, answer("ok"))
	waitAgent(f, good, "connected", connected)
	bad := ca.Creds(f, pkitest.Shard("s1", "n9")).Client(nil)
	goodNode := nodeClient(f, h.Registry, "s1", "n1")

	f.Fuzz(func(t *testing.T, data []byte) {
		raw, err := net.DialTimeout("tcp", h.addr, waitFor)
		if err != nil {
			t.Fatal(err)
		}
		c := tls.Client(raw, bad)
		_ = c.SetDeadline(time.Now().Add(waitFor))
		if err := c.Handshake(); err != nil {
			_ = c.Close()
			t.Fatalf("handshake: %v", err)
		}
		_, _ = c.Write(data)
		// Read what the gateway says until it or we give up, then hang up.
		_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				break
			}
		}
		_ = c.Close()
		if status, body := get(t, goodNode, "http://node/"); status != 200 || body != "ok" {
			t.Fatalf("another node's tunnel no longer serves: %d %q", status, body)
		}
	})
}

// Package listen is the listener every Jobbie server accepts on: the
// public port, the internal HTTPS ports of shard and control, the tunnel
// port, a self-hosted node's local API, the metrics port and Raft's.
//
// It keeps accepting through failures that pass: an accept error other
// than a closed listener (EMFILE when descriptors run out, the usual
// one) is retried with backoff, as net/http does, where fasthttp's Serve
// and others would return and never accept again. While an error has not
// been followed by a successful accept the listener is failing, and its
// Group says so to the process's /readyz, naming the listener and the
// error.
//
// It also bounds what a peer that has not authenticated can hold: a
// total cap on open connections, and caps (in total and per client
// address, an IPv6 one counted per /64) on connections that have not yet
// finished their handshake, each of which must finish within a deadline.
// A connection over a cap is closed as soon as it is accepted, so a flood
// on one port cannot spend the descriptors the process's other ports and
// outgoing calls need (Budget splits them).
package listen

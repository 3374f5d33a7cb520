// Package tunnel carries the hosted service's requests to a self-hosted
// shard node that has no inbound port: the node dials out, and the hosted
// side opens streams back over that one connection, each a net.Conn that
// carries ordinary HTTP as if the hosted side had dialed the node.
//
// The connection is mutual TLS with the deployment's certificates
// (internal/pki), multiplexed with yamux:
//
//   - Agent runs in the self-hosted shard node. It dials a hosted tunnel
//     endpoint with the node's shard certificate, admits only a server
//     whose certificate names the expected role (a gateway by default: the
//     endpoint is a listener of its own in the gateway process, served by
//     a Registry there), and is the yamux server: it only accepts streams.
//     Each accepted stream is handed to an http.Handler, or through
//     Agent.Listener to the node's own fiber/fasthttp server, which then
//     serves tunnelled requests with the same routes and checks as its
//     TCP listener. It reconnects with capped, jittered exponential backoff
//     until its context ends; yamux keep-alives find a dead link.
//   - Registry runs in the hosted process. It accepts agents, admitting
//     only shard certificates from the CA that neither Revoke nor the
//     caller's authorizer refuses, keys each session by the shard id and
//     node id the certificate names (nothing the agent says is read), keeps
//     one session per node (the newest wins), and opens streams to a node
//     for HTTP clients: DialContext, Dial (fasthttp.HostClient.Dial with
//     Addr "tunnel://<shard>/<node>") and NodeDialer (net/http).
//
// Whom a stream reached, and who opened it, is the tunnel's TLS peer: a
// stream's conn reports the tunnel connection's TLS state (its Handshake
// is a no-op), so fasthttp servers, pki.Peer/Require and pki.PeerIdentity
// see the peer exactly as on a direct mutual-TLS connection. Only the
// authenticated hosted peer can open streams to an agent, and only the
// node a certificate names can answer streams opened to that name.
//
// A dial to a node that has no live session fails at once with a
// *net.OpError (Op "dial") wrapping ErrNotConnected or ErrRevoked, so
// callers that retry what was certainly not sent (shardclient.Sent)
// treat it as such.
package tunnel

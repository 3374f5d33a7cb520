// Package shardclient is how a process talks to shard clusters over HTTP:
// a keep-alive connection pool per node address and, beside it, a link
// (internal/shardlink: one connection carrying many requests at once,
// link.go), each shard's route (its
// leader as gossip advertises it, or as a node named it, and its members),
// and requests retried while a shard elects a leader. The gateway proxies
// every tenant request through it; a shard node forwards a follower's
// writes and asks to join its group through its pool; control's leader
// reads usage, takes and restores backups and drives moves through it
// (Send: any method, a streamed body opened afresh for each try).
//
// A node is reached at host:port (mutual TLS with Config.TLS), over a
// Unix socket on the same host, or, for a self-hosted node that dialed
// in, at its tunnel address "tunnel://<shard>/<node>" through
// Config.Tunnel (a tunnel.Registry). A tunnel stream speaks plain HTTP
// inside the tunnel's mutual TLS, and its peer is checked as a TLS peer
// is: the node the address names, a member of the route's shard. A node
// at host:port or on a Unix socket gets a link once a request got an
// answer from it, dialed as the pool dials; Do's requests go on it while
// it is up (link.go says when they do not), with the pool's outcomes.
//
// The one rule about repeating a request: it is sent again only when it
// was certainly not applied. An answer that says "not the leader" (503
// no_leader, or 503/421 naming the leader in wire.LeaderHeader) is given
// only for requests the node did not apply; a connection that could not
// be made (Sent is false) never carried the request; after a request was
// sent and no answer came, only reads (GET, HEAD) are repeated; a request
// a link never wrote goes on the pool, one it wrote and lost is sent. The
// connection pools never repeat anything themselves (fasthttp would
// resend even a POST whose connection closed before the answer). An
// answer refused for its size or by its budget (answer.go: each answer
// is bounded, and a long one read into a buffer of its own, charged as
// it grows) is never asked for again.
package shardclient

// Package controlclient is how Jobbie's other processes call the control
// plane's HTTP API: one client over mutual TLS for every node of the
// control group, with no knowledge of what is asked. A gateway asks it
// for signing keys, revocations, placements and tenant administration;
// shard registration and a self-hosted node's certificate renewal are the
// same kind of call.
//
// Control runs as a group of nodes, any of which answers (a follower
// forwards to its leader). The client knows them from Config.URL (one
// base URL, or several separated by commas) and from gossip (control
// nodes advertise their HTTP address): gossip only says where to look,
// the TLS configuration says whom the client may reach. It keeps to the
// node that answered last and moves on to the next when one cannot be
// reached, or answers 503 no_leader (control's promise that the request
// was not applied), so a node's loss or an election costs a retry rather
// than an error. A node that failed is tried after the others for a
// while (downFor).
//
// The one rule about repeating a request: a write (any method but GET)
// that was sent to a node that then gave no answer is never sent again,
// to that node or another, since it may have been applied. Reads are
// repeated on the next node; a read answered 503 moves on too. A client
// whose calls are all safe to repeat (Config.Repeatable) treats its
// writes as reads, and moves on from any 5xx.
//
// Do and JSON send a request and read the whole answer (at most
// Config.MaxBody); Open sends a GET whose answer is streamed, and gives
// the node Config.Timeout to start answering rather than to send it all.
package controlclient

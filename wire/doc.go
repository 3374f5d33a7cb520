// Package wire is Jobbie's public vocabulary: the JSON shapes of the HTTP
// API, job states and the other enumerations that travel in them, header
// names, error codes and the protocol's limits. The Go SDK (client/), the
// gateway and the shard's HTTP API all import it, so what the server
// sends and what a client reads cannot drift apart.
//
// It imports nothing but the standard library. Request types keep
// flexible fields (durations written "5s" or as seconds, optional times)
// as json.RawMessage: the server validates them and names the field in a
// 400, and clients build them with Seconds and Duration.
package wire

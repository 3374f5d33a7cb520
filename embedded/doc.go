// Package embedded runs Jobbie inside a Go program: one shard node (the
// same engine, scheduler and job lifecycle as a hosted shard, package
// shard) on a data directory the program chooses, reached by the
// program's producers and workers through an ordinary *client.Client
// whose requests go to the node over a Unix socket in that directory,
// without TCP, TLS, a key or a gateway. Moving the program to the hosted
// service is changing the one constructor: client.New(url, key) in place
// of (*Embedded).Client(). Options.Listen also serves the API to other
// processes, behind a key the node mints, through the gateway a
// self-hosted node runs as its local API, and Options.Console the
// console there.
//
// What it is not: one node, so no replication or failover; no control
// plane, so no tenants, key management, plans, metering, invoices,
// backups or moves; the console only on Listen; no worker stream
// (workers long-poll over HTTP). docs/embedded.md says it at length.
package embedded

// Package leader runs what only the control plane's leader does: the
// usage puller (and invoice freezing after each pull), backups and
// restores and the backup policies' runs and retention, live moves and
// their cut-over, the clearing of moved tombstones, and the duties of a
// node taking the lead (a signing key exists, its HTTP address is
// recorded). The loops decide when; the service decides what, and is the
// only way they change the state. Shards are reached through
// internal/shardclient alone (shards.go).
package leader

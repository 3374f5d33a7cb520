// Package service is the control plane's operations as Go calls, and the
// only proposer of commands: tenants, namespaces and their placement, API
// keys and their signing, roles, registered and self-hosted shards and
// their nodes, joins and certificate renewal, trust bundles, the backup
// catalog and policies, moves, plans and quotas, and reads of usage and
// invoices. Each validates its input, builds a command, proposes it on the
// running node (Attach, Acquire) and answers; reads come from a snapshot
// of the node's own state (View).
//
// What a call starts and what reaches shards (taking a backup, driving a
// move, clearing a moved tombstone) runs in the leader package, behind
// the Runner interface; the leader's runners record what they did through
// the service's methods, so no command is built anywhere else.
package service

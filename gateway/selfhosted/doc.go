// Package selfhosted is the gateway's support of self-hosted shards:
// the tunnel listener their nodes dial (tunnels.go), admitting a joined
// node of a listed shard of its certificate's tenant and cutting those
// control lists no more; the trust bundles pushed to connected nodes
// (trustpush.go); the health of a tenant's shards asked over their
// tunnels (health.go); and, on the node's side, the local API's view of
// control: Local answers controlapi.Control from the node's trust bundle
// (local.go).
package selfhosted

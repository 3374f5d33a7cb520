package control

import (
	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
)

// maxNamespacesPerTenant bounds a tenant's namespaces (and so the lists
// that name them).
const maxNamespacesPerTenant = 1000

// createNamespaceCmd creates a namespace and places it on a shard. How it
// chooses (and the static shards, which are per-node configuration)
// travels in the command, so every node places it the same way whatever
// its configuration.
type createNamespaceCmd struct {
	TenantID string `json:"tenant_id"`
	Name     string `json:"name"`
	placement
}

func applyCreateNamespace(tx *replica.Tx, c *createNamespaceCmd) (Namespace, error) {
	if _, err := loadTenant(tx, c.TenantID); err != nil {
		return Namespace{}, businessErr(err)
	}
	if must(exists(tx, layout.Namespace(c.TenantID, c.Name))) {
		return Namespace{}, apierr.New(apierr.Conflict, "namespace %q exists", c.Name)
	}
	if must(count(tx, layout.Namespaces(c.TenantID))) >= maxNamespacesPerTenant {
		return Namespace{}, apierr.New(apierr.Conflict, "a tenant may have at most %d namespaces", maxNamespacesPerTenant)
	}
	shard, err := c.choose(tx)
	if err != nil {
		return Namespace{}, err
	}
	ns := Namespace{Name: c.Name, CreatedAt: tx.Now, ShardID: shard}
	putNamespace(tx, c.TenantID, ns)
	return ns, nil
}

// putNamespace writes a namespace and counts it on its shard.
func putNamespace(tx *replica.Tx, tid string, ns Namespace) {
	mustSetJSON(tx, layout.Namespace(tid, ns.Name), ns)
	load := must(getUint64(tx, layout.ShardLoad(ns.ShardID)))
	mustSet(tx, layout.ShardLoad(ns.ShardID), layout.Uint64(load+1))
}

func loadNamespace(r pebble.Reader, tid, name string) (Namespace, error) {
	var ns Namespace
	ok, err := getJSON(r, layout.Namespace(tid, name), &ns)
	if err == nil && !ok {
		err = apierr.New(apierr.NotFound, "namespace %q not found", name)
	}
	return ns, err
}

func listNamespaces(r pebble.Reader, tid string) ([]Namespace, error) {
	out := []Namespace{}
	err := scanJSON(r, layout.Namespaces(tid), func(_ []byte, ns Namespace) { out = append(out, ns) })
	return out, err
}

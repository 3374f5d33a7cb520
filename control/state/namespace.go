package state

import (
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
)

// MaxNamespacesPerTenant bounds a tenant's namespaces (and so the lists
// that name them).
const MaxNamespacesPerTenant = 1000

// CreateNamespaceCmd creates a namespace with its settings (checked by
// the proposer) and places it on a shard. How it chooses (and the static
// shards, which are per-node configuration) travels in the command, so
// every node places it the same way whatever its configuration.
type CreateNamespaceCmd struct {
	TenantID           string        `json:"tenant_id"`
	Name               string        `json:"name"`
	Description        string        `json:"description,omitempty"`
	Retention          time.Duration `json:"retention,omitempty"`
	DeletionProtection bool          `json:"deletion_protection,omitempty"`
	// Shard is the tenant's own self-hosted shard it asked for; empty:
	// Placement chooses.
	Shard string `json:"shard,omitempty"`
	Placement
	// Tombstones is set by proposers that clear moved tombstones
	// (move_tombstone.go): the apply refuses a shard that an earlier move
	// of the namespace left, unless it is Cleared, the shard the proposer
	// cleared. Commands without it place as they did when proposed.
	Tombstones bool   `json:"tombstones,omitempty"`
	Cleared    string `json:"cleared,omitempty"`
}

// UpdateNamespaceCmd changes the settings it carries (nil: unchanged; a
// Retention of 0 removes it). The proposer checked their shapes.
type UpdateNamespaceCmd struct {
	TenantID           string         `json:"tenant_id"`
	Name               string         `json:"name"`
	Description        *string        `json:"description"`
	Retention          *time.Duration `json:"retention"`
	DeletionProtection *bool          `json:"deletion_protection"`
}

// DeleteNamespaceCmd deletes a namespace's record, unless its deletion
// protection is on. The gateway has emptied its shard first.
type DeleteNamespaceCmd struct {
	TenantID string `json:"tenant_id"`
	Name     string `json:"name"`
}

func applyCreateNamespace(tx *replica.Tx, c *CreateNamespaceCmd) (Namespace, error) {
	shard, err := c.Place(tx, tx.Now)
	if err != nil {
		return Namespace{}, err
	}
	if c.Tombstones && shard != c.Cleared && LeftTombstone(tx, c.TenantID, c.Name, shard) {
		return Namespace{}, apierr.Retry(apierr.Unavailable, 1,
			"the placement of namespace %q changed while it was being created; nothing was created: retry", c.Name)
	}
	ns := Namespace{Name: c.Name, CreatedAt: tx.Now, ShardID: shard,
		Description: c.Description, Retention: c.Retention, DeletionProtection: c.DeletionProtection}
	putNamespace(tx, c.TenantID, ns)
	return ns, nil
}

func applyUpdateNamespace(tx *replica.Tx, c *UpdateNamespaceCmd) (Namespace, error) {
	ns, err := LoadNamespace(tx, c.TenantID, c.Name)
	if err != nil {
		return Namespace{}, businessErr(err)
	}
	if c.Description != nil {
		ns.Description = *c.Description
	}
	if c.Retention != nil {
		ns.Retention = *c.Retention
	}
	if c.DeletionProtection != nil {
		ns.DeletionProtection = *c.DeletionProtection
	}
	mustSetJSON(tx, layout.Namespace(c.TenantID, ns.Name), ns)
	return ns, nil
}

func applyDeleteNamespace(tx *replica.Tx, c *DeleteNamespaceCmd) (Namespace, error) {
	ns, err := LoadNamespace(tx, c.TenantID, c.Name)
	if err != nil {
		return Namespace{}, businessErr(err)
	}
	if ns.DeletionProtection {
		return Namespace{}, errDeletionProtected(ns.Name)
	}
	if id, ok := RunningMove(tx, c.TenantID, ns.Name); ok {
		return Namespace{}, ErrMoveRunning(id, ns.Name, "delete it")
	}
	mustDelete(tx, layout.Namespace(c.TenantID, ns.Name))
	// Its backups stay in the catalog (a restore brings it back); its
	// policy goes with it.
	mustDelete(tx, layout.BackupPolicy(c.TenantID, ns.Name))
	// A shard that holds no namespace any more has no count, as before
	// its first: the shard list shows shards without one only while they
	// are configured or registered.
	switch load := must(getUint64(tx, layout.ShardLoad(ns.ShardID))); {
	case load > 1:
		mustSet(tx, layout.ShardLoad(ns.ShardID), layout.Uint64(load-1))
	default:
		mustDelete(tx, layout.ShardLoad(ns.ShardID))
	}
	return ns, nil
}

func errDeletionProtected(name string) error {
	return apierr.New(apierr.DeletionProtected, "namespace %q has deletion protection on: set deletion_protection to false first", name)
}

// putNamespace writes a namespace and counts it on its shard.
func putNamespace(tx *replica.Tx, tid string, ns Namespace) {
	mustSetJSON(tx, layout.Namespace(tid, ns.Name), ns)
	load := must(getUint64(tx, layout.ShardLoad(ns.ShardID)))
	mustSet(tx, layout.ShardLoad(ns.ShardID), layout.Uint64(load+1))
}

func LoadNamespace(r pebble.Reader, tid, name string) (Namespace, error) {
	var ns Namespace
	ok, err := getJSON(r, layout.Namespace(tid, name), &ns)
	if err == nil && !ok {
		err = apierr.New(apierr.NotFound, "namespace %q not found", name)
	}
	return ns, err
}

func ListNamespaces(r pebble.Reader, tid string) ([]Namespace, error) {
	out := []Namespace{}
	err := scanJSON(r, layout.Namespaces(tid), func(_ []byte, ns Namespace) { out = append(out, ns) })
	return out, err
}

// Place runs the checks of a create on r at now and answers the shard
// the namespace goes on: the apply's, and the proposer's guess of it.
func (c *CreateNamespaceCmd) Place(r pebble.Reader, now time.Time) (string, error) {
	if _, err := LoadTenant(r, c.TenantID); err != nil {
		return "", businessErr(err)
	}
	if must(Exists(r, layout.Namespace(c.TenantID, c.Name))) {
		return "", apierr.New(apierr.Conflict, "namespace %q exists", c.Name)
	}
	if must(count(r, layout.Namespaces(c.TenantID))) >= MaxNamespacesPerTenant {
		return "", apierr.New(apierr.Conflict, "a tenant may have at most %d namespaces", MaxNamespacesPerTenant)
	}
	if err := CheckCountQuota(r, c.TenantID, now, "max_namespaces", must(count(r, layout.Namespaces(c.TenantID)))); err != nil {
		return "", err
	}
	return c.shardFor(r)
}

// shardFor is the shard a new namespace goes on: the tenant's own shard
// it named (another tenant's or an unknown one is a 404 alike), or
// Placement's choice.
func (c *CreateNamespaceCmd) shardFor(r pebble.Reader) (string, error) {
	if c.Shard == "" {
		return c.choose(r)
	}
	if owner := must(ShardOwner(r, c.Shard)); owner != c.TenantID {
		return "", apierr.New(apierr.NotFound, "shard %q not found", c.Shard)
	}
	return c.Shard, nil
}

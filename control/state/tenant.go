package state

import (
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/billing"
	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/tenancy"
)

// OwnerKeyName names the key created with every tenant.
const OwnerKeyName = "owner"

// CreateTenantCmd creates a tenant, its default namespace (placed as
// CreateNamespaceCmd places one) and its owner key, all at once.
type CreateTenantCmd struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	OwnerKeyID string `json:"owner_key_id"`
	// Plan is the tenant's plan from its creation; "" is the free plan.
	Plan string `json:"plan,omitempty"`
	Placement
}

// TenantCreated is the result of createTenantCmd.
type TenantCreated struct {
	Tenant Tenant
	Owner  APIKey
}

func applyCreateTenant(tx *replica.Tx, c *CreateTenantCmd) (TenantCreated, error) {
	if must(Exists(tx, layout.TenantName(c.Name))) {
		return TenantCreated{}, apierr.New(apierr.Conflict, "tenant name %q is taken", c.Name)
	}
	if must(Exists(tx, layout.Tenant(c.ID))) {
		return TenantCreated{}, apierr.New(apierr.Conflict, "tenant id %q exists", c.ID)
	}
	var first *billing.PlanChange
	if c.Plan != "" && c.Plan != billing.FreePlan {
		// A tenant made on a plan is on it from its first hour: no other
		// plan ever applied to it, so no invoice hour changes meaning.
		v, ok := billing.VersionAt(must(LoadPlanVersions(tx, c.Plan)), tx.Now.UTC().Truncate(time.Hour))
		if !ok {
			return TenantCreated{}, apierr.Field("plan", "plan %q does not exist or has no version in effect yet", c.Plan)
		}
		first = &billing.PlanChange{Plan: c.Plan, Version: v.Plan.Version, SetAt: tx.Now.UTC()}
	}
	shard, err := c.choose(tx)
	if err != nil {
		return TenantCreated{}, err
	}
	t := Tenant{ID: c.ID, Name: c.Name, CreatedAt: tx.Now}
	if first != nil {
		mustSetJSON(tx, layout.TenantPlan(t.ID, tx.Now.UTC().Truncate(time.Hour)), *first)
	}
	mustSetJSON(tx, layout.Tenant(t.ID), t)
	mustSet(tx, layout.TenantName(t.Name), []byte(t.ID))
	putNamespace(tx, t.ID, Namespace{Name: tenancy.DefaultNamespace, CreatedAt: tx.Now, ShardID: shard})
	owner := APIKey{
		ID: c.OwnerKeyID, TenantID: t.ID, Name: OwnerKeyName, Role: tenancy.RoleOwner,
		Namespaces: []string{tenancy.AllNamespaces}, CreatedAt: tx.Now,
	}
	putKey(tx, owner)
	return TenantCreated{Tenant: t, Owner: owner}, nil
}

func Exists(r pebble.Reader, k []byte) (bool, error) {
	_, ok, err := getRaw(r, k)
	return ok, err
}

func LoadTenant(r pebble.Reader, id string) (Tenant, error) {
	var t Tenant
	ok, err := getJSON(r, layout.Tenant(id), &t)
	if err == nil && !ok {
		err = apierr.New(apierr.NotFound, "tenant %q not found", id)
	}
	return t, err
}

func LoadTenantByName(r pebble.Reader, name string) (Tenant, error) {
	id, ok, err := getRaw(r, layout.TenantName(name))
	if err != nil {
		return Tenant{}, err
	}
	if !ok {
		return Tenant{}, apierr.New(apierr.NotFound, "tenant %q not found", name)
	}
	return LoadTenant(r, string(id))
}

func ListTenants(r pebble.Reader) ([]Tenant, error) {
	out := []Tenant{}
	err := scanJSON(r, layout.Tenants(), func(_ []byte, t Tenant) { out = append(out, t) })
	return out, err
}

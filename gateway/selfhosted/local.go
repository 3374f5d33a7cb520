package selfhosted

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A self-hosted shard node's local API is a gateway in the node's process
// (gateway Config.Local) that serves the tenant's workers in the
// customer's network, also while the hosted service is unreachable. It
// is the hosted gateway with one difference: what it would ask control,
// it reads from the trust bundle the hosted gateways push to the node
// (wire.TrustBundle, trustpush.go), through Local. So keys, revocations,
// rotated secrets, retiring signing keys, custom roles and RBAC are
// judged by the very code the hosted gateway runs, and only the tenant's
// own namespaces on this shard are served, over the node's Unix socket.
//
// The bundle stands in for control's revocation list: the list counts as
// fresh from when the bundle arrived, so once no bundle has come for
// RevocationMaxAge (the hosted service unreachable that long) every key
// is refused, as a hosted gateway refuses keys when control is away.
// Tenant administration, usage, invoices and backups are the hosted
// gateway's alone: their routes answer 404 there, and Local refuses
// those calls. The console is not served either, unless
// LocalTrust.Console asks for it (an embedded node's listener does: its
// screens of jobs, queues and schedules need only the shard). No plan
// applies (no rate limits or monthly caps: the shard is the tenant's own
// hardware), and requests served there are not counted as api_requests.

// LocalTrust makes a gateway a self-hosted shard node's local API.
type LocalTrust struct {
	// TenantID and ShardID are the node's own (its certificate's): only
	// that tenant's keys, and its namespaces on that shard, are served.
	TenantID, ShardID string
	// ShardAddr is how the node is reached: "unix:<path>", its socket.
	ShardAddr string
	// Bundle is the newest trust bundle the node holds and when it
	// arrived; ok is false before the first.
	Bundle func() (b wire.TrustBundle, receivedAt time.Time, ok bool)
	// Console serves the console too, its sessions signed in with the
	// bundle's keys and its screens of tenant administration saying they
	// are not available (no control behind them). Off on a self-hosted
	// node, whose tenant has the hosted console.
	Console bool
}

// Namespaces are the bundle's namespaces, the ones served, as tenant
// may know them: none for another tenant (a hosted signing key vouches
// for every tenant's keys), none before the first bundle.
func (l *LocalTrust) Namespaces(tenant string) []string {
	b, _, ok := l.Bundle()
	if !ok || tenant != l.TenantID {
		return []string{}
	}
	names := make([]string, 0, len(b.Namespaces))
	for _, ns := range b.Namespaces {
		names = append(names, ns.Name)
	}
	return names
}

// Validate reports the first problem with l.
func (l *LocalTrust) Validate() error {
	switch {
	case l.TenantID == "" || l.ShardID == "":
		return errors.New("gateway: a local API needs its node's tenant and shard")
	case !strings.HasPrefix(l.ShardAddr, "unix:"):
		return errors.New("gateway: a local API reaches its node over a Unix socket (unix:<path>)")
	case l.Bundle == nil:
		return errors.New("gateway: a local API needs its node's trust bundle")
	}
	return nil
}

// Local answers, from the trust bundle, what the gateway asks control on
// the data plane's path; it refuses the rest.
type Local struct{ cfg *LocalTrust }

var _ controlapi.Control = (*Local)(nil)

// NewLocal answers from l's bundle.
func NewLocal(l *LocalTrust) *Local { return &Local{cfg: l} }

// errNoBundle is every answer before the first bundle: control is, as it
// were, unreachable.
var errNoBundle = errors.New("gateway: no trust bundle from the hosted service yet")

func (lc *Local) bundle() (wire.TrustBundle, time.Time, error) {
	b, at, ok := lc.cfg.Bundle()
	if !ok {
		return wire.TrustBundle{}, time.Time{}, errNoBundle
	}
	return b, at, nil
}

// ofTenant refuses a tenant other than the node's, as control refuses a
// tenant it does not know.
func (lc *Local) ofTenant(tenant string) error {
	if tenant != lc.cfg.TenantID {
		return controlapi.Refusal(apierr.New(apierr.NotFound, "no such tenant here"))
	}
	return nil
}

func (lc *Local) JWKS(context.Context) (tenancy.JWKS, error) {
	b, _, err := lc.bundle()
	if err != nil {
		return tenancy.JWKS{}, err
	}
	var set tenancy.JWKS
	if err := json.Unmarshal(b.JWKS, &set); err != nil {
		return tenancy.JWKS{}, err
	}
	return set, nil
}

// Revocations are the bundle's, current as of its arrival.
func (lc *Local) Revocations(context.Context) (wire.Revocations, time.Time, error) {
	b, at, err := lc.bundle()
	return b.Revocations, at, err
}

func (lc *Local) TenantRoles(_ context.Context, _, tenant string) (wire.TenantRoles, error) {
	b, _, err := lc.bundle()
	if err == nil {
		err = lc.ofTenant(tenant)
	}
	if err != nil {
		return wire.TenantRoles{}, err
	}
	return b.Roles, nil
}

// Namespace is one of the tenant's namespaces on this shard, reached
// over the node's socket; any other is not found.
func (lc *Local) Namespace(_ context.Context, _, tenant, name string) (wire.NamespacePlacement, error) {
	b, _, err := lc.bundle()
	if err == nil {
		err = lc.ofTenant(tenant)
	}
	if err != nil {
		return wire.NamespacePlacement{}, err
	}
	for _, ns := range b.Namespaces {
		if ns.Name == name {
			ns.ShardID, ns.ShardAddr, ns.ShardMembers, ns.Moving = b.ShardID, lc.cfg.ShardAddr, nil, false
			return ns, nil
		}
	}
	return wire.NamespacePlacement{}, controlapi.Refusal(apierr.New(apierr.NotFound, "namespace %s is not on this shard", name))
}

// noPlan is the answer about a tenant's plan or quota: none applies.
func (lc *Local) noPlan(tenant string) error {
	if _, _, err := lc.bundle(); err != nil {
		return err
	}
	if err := lc.ofTenant(tenant); err != nil {
		return err
	}
	return controlapi.Refusal(apierr.New(apierr.NotFound, "no plan applies on a self-hosted shard's local API"))
}

func (lc *Local) TenantPlan(_ context.Context, _, tenant string) (wire.TenantPlan, error) {
	return wire.TenantPlan{}, lc.noPlan(tenant)
}

func (lc *Local) TenantQuota(_ context.Context, tenant string) (wire.TenantQuota, error) {
	return wire.TenantQuota{}, lc.noPlan(tenant)
}

// ReportKeyUse and ReportAPIRequests drop the report: last_used_at and
// api_requests are the hosted gateways' to report.
func (lc *Local) ReportKeyUse(context.Context, wire.KeyUsage) error {
	_, _, err := lc.bundle()
	return err
}

func (lc *Local) ReportAPIRequests(context.Context, wire.APIRequestsReport) error {
	_, _, err := lc.bundle()
	return err
}

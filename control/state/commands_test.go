package state

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/tenancy"
)

// applyBundle applies commands straight to a Pebble database, one batch
// per command, the way the replica host does.
type applyBundle struct {
	db  *pebble.DB
	now time.Time
	idx uint64
}

func setupApply(t *testing.T) *applyBundle {
	t.Helper()
	db, err := pebble.Open(filepath.Join(t.TempDir(), "state"), &pebble.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	return &applyBundle{db: db, now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// apply runs fn in a fresh batch, commits it and returns fn's result (or
// the error that refused the command) and whether the batch held no writes.
func apply[C, R any](t *testing.T, b *applyBundle, fn func(*replica.Tx, *C) (R, error), c C) (any, bool) {
	t.Helper()
	b.idx++
	b.now = b.now.Add(time.Second)
	batch := b.db.NewIndexedBatch()
	defer batch.Close()
	var out any
	res, err := fn(&replica.Tx{Batch: batch, Now: b.now, Index: b.idx}, &c)
	if out = res; err != nil {
		out = err
	}
	empty := batch.Empty()
	require.NoError(t, batch.Commit(pebble.NoSync))
	return out, empty
}

// requireCode checks a handler result is an API error with code.
func requireCode(t *testing.T, out any, code apierr.Code, empty bool) {
	t.Helper()
	require.Equal(t, code, apierr.CodeOf(out.(error)), "%v", out)
	require.True(t, empty, "a failed command must write nothing")
}

const (
	tidA = "t_01hzzzzzzzzzzzzzzzzzzzzzza"
	tidB = "t_01hzzzzzzzzzzzzzzzzzzzzzzb"
	kidA = "key_01hzzzzzzzzzzzzzzzzzzzza"
	kidB = "key_01hzzzzzzzzzzzzzzzzzzzzb"
)

func TestApplyCreateTenant(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	out, _ := apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Placement: Placement{Shards: []string{"s2", "s1"}}})
	res := out.(TenantCreated)
	require.Equal(t, Tenant{ID: tidA, Name: "acme", CreatedAt: b.now}, res.Tenant)
	require.Equal(t, APIKey{ID: kidA, TenantID: tidA, Name: "owner", Role: tenancy.RoleOwner, Namespaces: []string{"*"}, CreatedAt: b.now}, res.Owner)

	got, err := LoadTenantByName(b.db, "acme")
	require.NoError(t, err)
	require.Equal(t, res.Tenant, got)
	ns, err := LoadNamespace(b.db, tidA, "default")
	require.NoError(t, err)
	require.Equal(t, Namespace{Name: "default", CreatedAt: b.now, ShardID: "s1"}, ns, "ties go to the lower id")
	key, err := LoadKey(b.db, tidA, kidA)
	require.NoError(t, err)
	require.Equal(t, res.Owner, key)

	out, empty := apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidB, Name: "acme", OwnerKeyID: kidB, Placement: Placement{Shards: []string{"s1"}}})
	requireCode(t, out, apierr.Conflict, empty)
	out, empty = apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidB, Name: "other", OwnerKeyID: kidB})
	requireCode(t, out, apierr.Unavailable, empty)
}

func TestApplyCreateNamespacePlacesOnTheLeastLoadedShard(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	shards := []string{"s1", "s2", "s3"}
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Placement: Placement{Shards: shards}})

	var placed []string
	for _, name := range []string{"a", "b", "c", "d"} {
		out, _ := apply(t, b, applyCreateNamespace, CreateNamespaceCmd{TenantID: tidA, Name: name, Placement: Placement{Shards: shards}})
		ns := out.(Namespace)
		require.Equal(t, name, ns.Name)
		require.Equal(t, b.now, ns.CreatedAt)
		placed = append(placed, ns.ShardID)
	}
	// default went to s1; then s2, s3 (empty), then s1, s2 (ties by id).
	require.Equal(t, []string{"s2", "s3", "s1", "s2"}, placed)
	for id, want := range map[string]uint64{"s1": 2, "s2": 2, "s3": 1} {
		n, err := getUint64(b.db, layout.ShardLoad(id))
		require.NoError(t, err)
		require.Equal(t, want, n, id)
	}

	out, empty := apply(t, b, applyCreateNamespace, CreateNamespaceCmd{TenantID: tidA, Name: "a", Placement: Placement{Shards: shards}})
	requireCode(t, out, apierr.Conflict, empty)
	out, empty = apply(t, b, applyCreateNamespace, CreateNamespaceCmd{TenantID: tidB, Name: "a", Placement: Placement{Shards: shards}})
	requireCode(t, out, apierr.NotFound, empty)
	out, empty = apply(t, b, applyCreateNamespace, CreateNamespaceCmd{TenantID: tidA, Name: "e"})
	requireCode(t, out, apierr.Unavailable, empty)

	list, err := ListNamespaces(b.db, tidA)
	require.NoError(t, err)
	require.Len(t, list, 5)
	require.Equal(t, "a", list[0].Name, "sorted by name")
}

func TestApplyCreateKey(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Placement: Placement{Shards: []string{"s1"}}})
	apply(t, b, applyCreateNamespace, CreateNamespaceCmd{TenantID: tidA, Name: "emails", Placement: Placement{Shards: []string{"s1"}}})

	out, _ := apply(t, b, applyCreateKey, CreateKeyCmd{ID: kidB, TenantID: tidA, Name: "ci", Role: tenancy.RoleProducer, Namespaces: []string{"emails", "default"}})
	require.Equal(t, APIKey{ID: kidB, TenantID: tidA, Name: "ci", Role: tenancy.RoleProducer, Namespaces: []string{"emails", "default"}, CreatedAt: b.now}, out)

	out, empty := apply(t, b, applyCreateKey, CreateKeyCmd{ID: newID("key_"), TenantID: tidA, Name: "x", Role: tenancy.RoleViewer, Namespaces: []string{"emails", "nope"}})
	requireCode(t, out, apierr.BadRequest, empty)
	require.Equal(t, "namespaces", out.(*apierr.Error).Field)
	out, empty = apply(t, b, applyCreateKey, CreateKeyCmd{ID: newID("key_"), TenantID: tidB, Name: "x", Role: tenancy.RoleViewer, Namespaces: []string{"*"}})
	requireCode(t, out, apierr.NotFound, empty)
	out, empty = apply(t, b, applyCreateKey, CreateKeyCmd{ID: kidB, TenantID: tidA, Name: "x", Role: tenancy.RoleViewer, Namespaces: []string{"*"}})
	requireCode(t, out, apierr.Conflict, empty)

	opID := newID("key_")
	out, _ = apply(t, b, applyCreateKey, CreateKeyCmd{ID: opID, Name: "ops", Role: tenancy.RoleOperator})
	require.Equal(t, "", out.(APIKey).TenantID)
	ops, err := ListKeys(b.db, "")
	require.NoError(t, err)
	require.Len(t, ops, 1)
	keys, err := ListKeys(b.db, tidA)
	require.NoError(t, err)
	require.Equal(t, []string{kidA, kidB}, []string{keys[0].ID, keys[1].ID}, "operator keys are apart from tenants'")
}

func TestApplyCreateKeyExpiry(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Placement: Placement{Shards: []string{"s1"}}})
	cmd := func(exp time.Time) CreateKeyCmd {
		return CreateKeyCmd{ID: newID("key_"), TenantID: tidA, Name: "x", Role: tenancy.RoleViewer, Namespaces: []string{"*"}, ExpiresAt: &exp}
	}
	next := func() time.Time { return b.now.Add(time.Second) } // the time apply stamps on the next command

	bad := []func() time.Time{
		next,
		func() time.Time { return next().Add(-time.Hour) },
		func() time.Time { return next().AddDate(10, 0, 0).Add(time.Second) },
	}
	for _, exp := range bad {
		out, empty := apply(t, b, applyCreateKey, cmd(exp()))
		requireCode(t, out, apierr.BadRequest, empty)
		require.Equal(t, "expires_at", out.(*apierr.Error).Field, "%v", out)
	}
	exp := next().AddDate(10, 0, 0)
	out, _ := apply(t, b, applyCreateKey, cmd(exp))
	require.Equal(t, exp, *out.(APIKey).ExpiresAt, "exactly ten years ahead is allowed")
	stored, err := LoadKey(b.db, tidA, out.(APIKey).ID)
	require.NoError(t, err)
	require.Equal(t, out, stored)
}

func TestApplyCreateKeyCountsOnlyActiveKeys(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Placement: Placement{Shards: []string{"s1"}}})
	putKeys := func(n int, exp time.Time) {
		batch := b.db.NewBatch()
		defer batch.Close()
		for range n {
			putKey(&replica.Tx{Batch: batch}, APIKey{ID: newID("key_"), TenantID: tidA, Name: "k", Role: tenancy.RoleViewer,
				Namespaces: []string{"*"}, CreatedAt: b.now, ExpiresAt: &exp})
		}
		require.NoError(t, batch.Commit(pebble.NoSync))
	}
	create := CreateKeyCmd{ID: kidB, TenantID: tidA, Name: "ci", Role: tenancy.RoleViewer, Namespaces: []string{"*"}}

	putKeys(maxActiveKeysPerTenant, b.now) // expired by the next command
	out, _ := apply(t, b, applyCreateKey, create)
	require.Equal(t, kidB, out.(APIKey).ID, "expired keys leave room for new ones")

	putKeys(maxActiveKeysPerTenant-2, b.now.Add(time.Hour)) // with the owner and ci: at the limit
	create.ID = newID("key_")
	out, empty := apply(t, b, applyCreateKey, create)
	requireCode(t, out, apierr.Conflict, empty)
}

func TestApplyRevokeKey(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Placement: Placement{Shards: []string{"s1"}}})
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidB, Name: "bravo", OwnerKeyID: kidB, Placement: Placement{Shards: []string{"s1"}}})

	out, empty := apply(t, b, applyRevokeKey, RevokeKeyCmd{TenantID: tidB, ID: kidA})
	requireCode(t, out, apierr.NotFound, empty)

	out, _ = apply(t, b, applyRevokeKey, RevokeKeyCmd{TenantID: tidA, ID: kidA})
	revokedAt := b.now
	require.Equal(t, revokedAt, *out.(APIKey).RevokedAt)
	rev, err := LoadRevocations(b.db)
	require.NoError(t, err)
	require.Equal(t, Revocations{Version: 1, Revoked: []string{kidA}}, rev)

	out, empty = apply(t, b, applyRevokeKey, RevokeKeyCmd{TenantID: tidA, ID: kidA})
	require.True(t, empty, "revoking twice writes nothing")
	require.Equal(t, revokedAt, *out.(APIKey).RevokedAt)

	apply(t, b, applyRevokeKey, RevokeKeyCmd{TenantID: tidB, ID: kidB})
	rev, err = LoadRevocations(b.db)
	require.NoError(t, err)
	require.Equal(t, Revocations{Version: 2, Revoked: []string{kidA, kidB}}, rev)
	key, err := LoadKey(b.db, tidB, kidB)
	require.NoError(t, err)
	require.NotNil(t, key.RevokedAt)
}

func TestApplyAddSigningKey(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	seed := make([]byte, 32)
	first := SigningKey{ID: "sk_1", Seed: seed}
	out, _ := apply(t, b, applyAddSigningKey, AddSigningKeyCmd{Key: first, OnlyIfNone: true})
	require.Equal(t, "sk_1", out.(SigningKey).ID)
	require.Equal(t, b.now, out.(SigningKey).CreatedAt)

	out, empty := apply(t, b, applyAddSigningKey, AddSigningKeyCmd{Key: SigningKey{ID: "sk_2", Seed: seed}, OnlyIfNone: true})
	require.True(t, empty)
	require.Equal(t, "sk_1", out.(SigningKey).ID, "a key exists: nothing added")

	out, empty = apply(t, b, applyAddSigningKey, AddSigningKeyCmd{Key: first})
	requireCode(t, out, apierr.Conflict, empty)
	out, empty = apply(t, b, applyAddSigningKey, AddSigningKeyCmd{Key: SigningKey{ID: "sk_3", Seed: seed[:5]}})
	requireCode(t, out, apierr.BadRequest, empty)

	apply(t, b, applyAddSigningKey, AddSigningKeyCmd{Key: SigningKey{ID: "sk_2", Seed: seed}})
	active, err := LoadActiveSigningKey(b.db)
	require.NoError(t, err)
	require.Equal(t, "sk_2", active.ID, "a new key becomes the active one")
	all, err := ListSigningKeys(b.db)
	require.NoError(t, err)
	require.Len(t, all, 2)
}

func TestRegistryHasEveryCommandAndRejectsGarbage(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	for _, c := range []replica.CommandType{OpCreateTenant.Type, OpCreateNamespace.Type, OpCreateKey.Type, OpRevokeKey.Type,
		OpAddSigningKey.Type, OpRegisterShard.Type, OpUpdateNamespace.Type, OpDeleteNamespace.Type, OpRotateKey.Type,
		OpRecordKeyUse.Type, OpRotateSigning.Type, OpPutRole.Type, OpDeleteRole.Type, OpPutUsage.Type, OpPutAPIRequests.Type,
		OpPutPlan.Type, OpSetTenantPlan.Type, OpFreezeInvoice.Type, OpSetMemberHTTP.Type,
		OpStartBackup.Type, OpFinishBackup.Type, OpDeleteBackup.Type, OpPutBackupPolicy.Type, OpDelBackupPolicy.Type,
		OpStartRestore.Type, OpFinishRestore.Type, OpCreateJoinToken.Type, OpJoinShard.Type, OpRevokeShard.Type,
		OpStartMove.Type, OpMoveProgress.Type, OpSwitchMove.Type, OpCancelMove.Type, OpEndMove.Type, OpIdempotent.Type,
		OpAppendAudit.Type, OpTrimAudit.Type, OpPutSSO.Type, OpDeleteSSO.Type} {
		require.NotEmpty(t, reg.Name(c), "command %d", c)
	}
	require.Len(t, reg.Types(), 39, "every command is registered")
	require.Panics(t, func() { _, _ = reg.Apply(&replica.Tx{}, replica.Command(OpRevokeKey.Type, []byte("{not json"))) })
	require.Panics(t, func() { _, _ = reg.Apply(&replica.Tx{}, replica.Command(OpRevokeKey.Type, []byte{0xc1})) }, "nor msgpack")
}

// newID is an id as proposers make them: prefix and a lowercase ULID.
func newID(prefix string) string { return prefix + strings.ToLower(ulid.Make().String()) }

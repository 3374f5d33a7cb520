package state

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

func ptr[T any](v T) *T { return &v }

func TestApplyUpdateAndDeleteNamespace(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	shards := Placement{Shards: []string{"s1"}}
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Placement: shards})
	out, _ := apply(t, b, applyCreateNamespace, CreateNamespaceCmd{TenantID: tidA, Name: "emails", Description: "mail",
		Retention: time.Hour, DeletionProtection: true, Placement: shards})
	created := out.(Namespace)
	require.Equal(t, Namespace{Name: "emails", CreatedAt: b.now, ShardID: "s1", Description: "mail", Retention: time.Hour,
		DeletionProtection: true}, created)

	out, _ = apply(t, b, applyUpdateNamespace, UpdateNamespaceCmd{TenantID: tidA, Name: "emails", Description: ptr("")})
	want := created
	want.Description = ""
	require.Equal(t, want, out, "only the fields sent change")

	out, empty := apply(t, b, applyDeleteNamespace, DeleteNamespaceCmd{TenantID: tidA, Name: "emails"})
	requireCode(t, out, apierr.DeletionProtected, empty)
	out, empty = apply(t, b, applyUpdateNamespace, UpdateNamespaceCmd{TenantID: tidB, Name: "emails", DeletionProtection: ptr(false)})
	requireCode(t, out, apierr.NotFound, empty)

	out, _ = apply(t, b, applyUpdateNamespace, UpdateNamespaceCmd{TenantID: tidA, Name: "emails", Retention: ptr(time.Duration(0)),
		DeletionProtection: ptr(false)})
	want.Retention, want.DeletionProtection = 0, false
	require.Equal(t, want, out)
	stored, err := LoadNamespace(b.db, tidA, "emails")
	require.NoError(t, err)
	require.Equal(t, want, stored)
	require.Equal(t, uint64(2), must(getUint64(b.db, layout.ShardLoad("s1"))))

	out, _ = apply(t, b, applyDeleteNamespace, DeleteNamespaceCmd{TenantID: tidA, Name: "emails"})
	require.Equal(t, want, out)
	_, err = LoadNamespace(b.db, tidA, "emails")
	require.Equal(t, apierr.NotFound, apierr.CodeOf(err))
	require.Equal(t, uint64(1), must(getUint64(b.db, layout.ShardLoad("s1"))), "the shard holds one namespace fewer")
	out, empty = apply(t, b, applyDeleteNamespace, DeleteNamespaceCmd{TenantID: tidA, Name: "emails"})
	requireCode(t, out, apierr.NotFound, empty)

	apply(t, b, applyDeleteNamespace, DeleteNamespaceCmd{TenantID: tidA, Name: "default"})
	ok, err := Exists(b.db, layout.ShardLoad("s1"))
	require.NoError(t, err)
	require.False(t, ok, "a shard left with no namespace has no count")
	out, _ = apply(t, b, applyCreateNamespace, CreateNamespaceCmd{TenantID: tidA, Name: "emails", Placement: shards})
	require.Equal(t, "", out.(Namespace).Description, "a namespace made again starts afresh")
}

func TestApplyRotateKey(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Placement: Placement{Shards: []string{"s1"}}})

	out, _ := apply(t, b, applyRotateKey, RotateKeyCmd{TenantID: tidA, ID: kidA, Grace: time.Hour})
	first := b.now
	r := out.(KeyRotated)
	require.Equal(t, uint64(1), r.Key.Generation)
	require.Equal(t, first.Add(time.Hour), r.PreviousValidUntil)
	require.Equal(t, []GraceSecret{{Generation: 0, Until: first.Add(time.Hour)}}, r.Key.Grace)
	require.Equal(t, first, *r.Key.RotatedAt)
	rev, err := LoadRevocations(b.db)
	require.NoError(t, err)
	require.Equal(t, uint64(1), rev.Version, "a rotation bumps the list's version")
	require.Equal(t, []wire.KeySecrets{{KeyID: kidA, Generation: 1, Grace: []wire.GraceSecret{{Generation: 0, Until: first.Add(time.Hour)}}}},
		rev.Rotated)

	// A longer grace never lengthens an earlier secret's; a shorter one cuts it.
	out, _ = apply(t, b, applyRotateKey, RotateKeyCmd{TenantID: tidA, ID: kidA, Grace: 2 * time.Hour})
	second := b.now
	require.Equal(t, []GraceSecret{{0, first.Add(time.Hour)}, {1, second.Add(2 * time.Hour)}}, out.(KeyRotated).Key.Grace)
	out, _ = apply(t, b, applyRotateKey, RotateKeyCmd{TenantID: tidA, ID: kidA, Grace: time.Minute})
	third := b.now
	require.Equal(t, []GraceSecret{{0, third.Add(time.Minute)}, {1, third.Add(time.Minute)}, {2, third.Add(time.Minute)}},
		out.(KeyRotated).Key.Grace)
	out, _ = apply(t, b, applyRotateKey, RotateKeyCmd{TenantID: tidA, ID: kidA})
	require.Empty(t, out.(KeyRotated).Key.Grace, "a grace of 0 ends every earlier secret at once")
	require.Equal(t, b.now, out.(KeyRotated).PreviousValidUntil)
	require.Equal(t, uint64(4), out.(KeyRotated).Key.Generation)

	for range maxGraceSecrets {
		apply(t, b, applyRotateKey, RotateKeyCmd{TenantID: tidA, ID: kidA, Grace: time.Hour})
	}
	out, empty := apply(t, b, applyRotateKey, RotateKeyCmd{TenantID: tidA, ID: kidA, Grace: time.Hour})
	requireCode(t, out, apierr.Conflict, empty)

	out, empty = apply(t, b, applyRotateKey, RotateKeyCmd{TenantID: tidB, ID: kidA})
	requireCode(t, out, apierr.NotFound, empty)
	exp := b.now.Add(3 * time.Second)
	apply(t, b, applyCreateKey, CreateKeyCmd{ID: kidB, TenantID: tidA, Name: "short", Role: tenancy.RoleViewer, Namespaces: []string{"*"}, ExpiresAt: &exp})
	apply(t, b, applyRotateKey, RotateKeyCmd{TenantID: tidA, ID: kidB}) // one second before it expires
	out, empty = apply(t, b, applyRotateKey, RotateKeyCmd{TenantID: tidA, ID: kidB})
	requireCode(t, out, apierr.Conflict, empty)

	apply(t, b, applyRevokeKey, RevokeKeyCmd{TenantID: tidA, ID: kidA})
	out, empty = apply(t, b, applyRotateKey, RotateKeyCmd{TenantID: tidA, ID: kidA})
	requireCode(t, out, apierr.Conflict, empty)
	rev, err = LoadRevocations(b.db)
	require.NoError(t, err)
	require.Equal(t, []string{kidA}, rev.Revoked)
	require.Equal(t, []wire.KeySecrets{{KeyID: kidB, Generation: 1}}, rev.Rotated, "a revoked key is listed as revoked only")
}

func TestSecretWorks(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ks := wire.KeySecrets{KeyID: kidA, Generation: 3, Grace: []wire.GraceSecret{{Generation: 1, Until: now.Add(time.Second)}}}
	for gen, want := range map[uint64]bool{0: false, 1: true, 2: false, 3: true, 4: true} {
		works, _ := SecretWorks(ks, gen, now)
		require.Equal(t, want, works, "generation %d", gen)
	}
	works, until := SecretWorks(ks, 1, now.Add(time.Second))
	require.False(t, works, "refused from the grace period's end on")
	require.Equal(t, now.Add(time.Second), until)
}

func TestApplyRecordKeyUse(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Placement: Placement{Shards: []string{"s1"}}})
	lastUse := func() *time.Time {
		k, err := LoadKey(b.db, tidA, kidA)
		require.NoError(t, err)
		k, err = WithLastUse(b.db, k)
		require.NoError(t, err)
		return k.LastUsedAt
	}
	require.Nil(t, lastUse(), "never seen")

	seen := b.now.Add(-time.Minute)
	_, empty := apply(t, b, applyRecordKeyUse, RecordKeyUseCmd{Uses: []KeyUse{
		{TenantID: tidA, ID: kidA, At: seen}, {TenantID: tidB, ID: kidA, At: seen}, {TenantID: tidA, ID: kidB, At: seen},
	}})
	require.False(t, empty)
	require.Equal(t, seen, *lastUse())
	_, empty = apply(t, b, applyRecordKeyUse, RecordKeyUseCmd{Uses: []KeyUse{{TenantID: tidA, ID: kidA, At: seen.Add(-time.Second)}}})
	require.True(t, empty, "an older sighting changes nothing")
	apply(t, b, applyRecordKeyUse, RecordKeyUseCmd{Uses: []KeyUse{{TenantID: tidA, ID: kidA, At: b.now.Add(time.Hour)}}})
	require.Equal(t, b.now, *lastUse(), "a time ahead of the command's is the command's")
	ok, err := Exists(b.db, layout.KeyUsed(tidB, kidA))
	require.NoError(t, err)
	require.False(t, ok, "uses of unknown keys are skipped")
}

func TestApplyRotateSigningKey(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	seed := make([]byte, 32)
	apply(t, b, applyAddSigningKey, AddSigningKeyCmd{Key: SigningKey{ID: "sk_1", Seed: seed}, OnlyIfNone: true})

	out, _ := apply(t, b, applyRotateSigningKey, RotateSigningKeyCmd{Key: SigningKey{ID: "sk_2", Seed: seed}, RetireAfter: time.Hour})
	require.Equal(t, SigningKey{ID: "sk_2", Seed: seed, CreatedAt: b.now}, out)
	retire := b.now.Add(time.Hour)
	active, err := LoadActiveSigningKey(b.db)
	require.NoError(t, err)
	require.Equal(t, "sk_2", active.ID)
	old, err := LoadSigningKey(b.db, "sk_1")
	require.NoError(t, err)
	require.Equal(t, retire, *old.RetiresAt)
	require.False(t, old.Retired(b.now))
	require.True(t, old.Retired(retire))

	apply(t, b, applyRotateSigningKey, RotateSigningKeyCmd{Key: SigningKey{ID: "sk_3", Seed: seed}, RetireAfter: 2 * time.Hour})
	old, _ = LoadSigningKey(b.db, "sk_1")
	require.Equal(t, retire, *old.RetiresAt, "a key already retiring keeps its earlier time")
	apply(t, b, applyRotateSigningKey, RotateSigningKeyCmd{Key: SigningKey{ID: "sk_4", Seed: seed}})
	for _, kid := range []string{"sk_1", "sk_2", "sk_3"} {
		k, err := LoadSigningKey(b.db, kid)
		require.NoError(t, err)
		require.True(t, k.Retired(b.now), "retire_after 0 retires every earlier key now: %s", kid)
		require.Len(t, k.Seed, 32, "seeds go at the next rotation")
	}
	apply(t, b, applyRotateSigningKey, RotateSigningKeyCmd{Key: SigningKey{ID: "sk_5", Seed: seed}, RetireAfter: time.Hour})
	for _, kid := range []string{"sk_1", "sk_2", "sk_3"} {
		k, _ := LoadSigningKey(b.db, kid)
		require.Empty(t, k.Seed, "a retired key's seed is erased: %s", kid)
	}

	out, empty := apply(t, b, applyRotateSigningKey, RotateSigningKeyCmd{Key: SigningKey{ID: "sk_5", Seed: seed}})
	requireCode(t, out, apierr.Conflict, empty)
	out, empty = apply(t, b, applyRotateSigningKey, RotateSigningKeyCmd{Key: SigningKey{ID: "sk_6", Seed: seed[:3]}})
	requireCode(t, out, apierr.BadRequest, empty)
	for i := range MaxLiveSigningKeys - 2 {
		apply(t, b, applyRotateSigningKey, RotateSigningKeyCmd{Key: SigningKey{ID: newID("sk_") + string(rune('a'+i)), Seed: seed}, RetireAfter: time.Hour})
	}
	out, empty = apply(t, b, applyRotateSigningKey, RotateSigningKeyCmd{Key: SigningKey{ID: "sk_x", Seed: seed}, RetireAfter: time.Hour})
	requireCode(t, out, apierr.Conflict, empty)
}

package state

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/tenancy"
)

// idemApply is applyIdem under lim with the real handlers, as a command
// of the log.
func idemApply(lim idemLimits) func(*replica.Tx, *IdemCmd) (*IdemOutcome, error) {
	reg := NewRegistry()
	return func(tx *replica.Tx, c *IdemCmd) (*IdemOutcome, error) { return applyIdem(reg, lim, tx, c) }
}

func roleCmd(tid, name string) []byte {
	perms := []tenancy.Permission{{Actions: []string{"enqueue"}, Namespaces: []string{"*"}, Queues: []string{"*"}}}
	return OpPutRole.Command(&PutRoleCmd{TenantID: tid, Name: name, Permissions: perms, Create: true})
}

func roleOf(t *testing.T, out any) RoleChanged {
	t.Helper()
	o, ok := out.(*IdemOutcome)
	require.True(t, ok, "%v", out)
	var rc RoleChanged
	require.NoError(t, replica.Decode(o.Result, &rc))
	return rc
}

// A create under a key is applied once: a repeat of the same request
// gets the first result and changes nothing, another request with the
// key is 422 and changes nothing, another tenant's same key is its own,
// and a refused create keeps no record.
func TestApplyIdempotentCreate(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Placement: Placement{Shards: []string{"s1"}}})
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidB, Name: "beta", OwnerKeyID: kidB, Placement: Placement{Shards: []string{"s1"}}})
	fn := idemApply(defaultIdemLimits)

	out, _ := apply(t, b, fn, IdemCmd{TenantID: tidA, Key: "k", Hash: []byte("h1"), Cmd: roleCmd(tidA, "pusher")})
	first := roleOf(t, out)
	require.False(t, out.(*IdemOutcome).Replayed)
	require.Equal(t, "pusher", first.Role.Name)

	out, empty := apply(t, b, fn, IdemCmd{TenantID: tidA, Key: "k", Hash: []byte("h1"), Cmd: roleCmd(tidA, "pusher")})
	require.True(t, out.(*IdemOutcome).Replayed)
	require.Equal(t, first, roleOf(t, out), "the first result, not a 409 for a taken name")
	require.True(t, empty, "a replay writes nothing")

	out, empty = apply(t, b, fn, IdemCmd{TenantID: tidA, Key: "k", Hash: []byte("h2"), Cmd: roleCmd(tidA, "other")})
	requireCode(t, out, apierr.IdempotencyKeyReused, empty)
	_, found, err := LoadRole(b.db, tidA, "other")
	require.NoError(t, err)
	require.False(t, found)

	out, _ = apply(t, b, fn, IdemCmd{TenantID: tidB, Key: "k", Hash: []byte("h2"), Cmd: roleCmd(tidB, "other")})
	require.False(t, out.(*IdemOutcome).Replayed, "tenant B's key k is not tenant A's")
	_, found, err = LoadRole(b.db, tidB, "other")
	require.NoError(t, err)
	require.True(t, found)

	// A refused create (the name is taken) keeps no record: once the
	// cause is gone, the same request under the key creates.
	out, empty = apply(t, b, fn, IdemCmd{TenantID: tidA, Key: "k2", Hash: []byte("h3"), Cmd: roleCmd(tidA, "pusher")})
	requireCode(t, out, apierr.Conflict, empty)
	apply(t, b, applyDeleteRole, DeleteRoleCmd{TenantID: tidA, Name: "pusher"})
	out, _ = apply(t, b, fn, IdemCmd{TenantID: tidA, Key: "k2", Hash: []byte("h3"), Cmd: roleCmd(tidA, "pusher")})
	require.False(t, out.(*IdemOutcome).Replayed)

	// A command a key may not wrap is refused, naming the header.
	out, empty = apply(t, b, fn, IdemCmd{TenantID: tidA, Key: "k3", Hash: []byte("h"), Cmd: OpDeleteRole.Command(&DeleteRoleCmd{TenantID: tidA, Name: "pusher"})})
	requireCode(t, out, apierr.BadRequest, empty)
	n, err := IdemKeys(b.db, tidA)
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
}

// A record is kept for the TTL by the entry's clock: after it, the same
// key creates again; expired records are deleted as the tenant writes,
// and past the bound the record expiring first goes.
func TestApplyIdempotentExpiryAndBound(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Placement: Placement{Shards: []string{"s1"}}})
	fn := idemApply(idemLimits{max: 3, ttl: time.Hour})

	out, _ := apply(t, b, fn, IdemCmd{TenantID: tidA, Key: "k", Hash: []byte("h"), Cmd: roleCmd(tidA, "r0")})
	first := roleOf(t, out)
	b.now = b.now.Add(time.Hour - 2*time.Second) // apply adds one: still within the hour
	out, _ = apply(t, b, fn, IdemCmd{TenantID: tidA, Key: "k", Hash: []byte("other"), Cmd: roleCmd(tidA, "r0")})
	requireCode(t, out, apierr.IdempotencyKeyReused, true)
	b.now = b.now.Add(time.Second) // apply adds one: the hour is over
	out, _ = apply(t, b, fn, IdemCmd{TenantID: tidA, Key: "k", Hash: []byte("other"), Cmd: roleCmd(tidA, "r1")})
	second := roleOf(t, out)
	require.False(t, out.(*IdemOutcome).Replayed, "an expired key is a new one")
	require.NotEqual(t, first.Role.Name, second.Role.Name)
	n, err := IdemKeys(b.db, tidA)
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "the expired record was replaced")

	for i := 2; i <= 4; i++ {
		apply(t, b, fn, IdemCmd{TenantID: tidA, Key: fmt.Sprintf("k%d", i), Hash: []byte("h"), Cmd: roleCmd(tidA, fmt.Sprintf("r%d", i))})
	}
	n, err = IdemKeys(b.db, tidA)
	require.NoError(t, err)
	require.EqualValues(t, 3, n, "at most the bound")
	// k, the oldest, was forgotten early: the same request creates again
	// (and is refused, its role being there); k4, the newest, replays.
	out, _ = apply(t, b, fn, IdemCmd{TenantID: tidA, Key: "k", Hash: []byte("other"), Cmd: roleCmd(tidA, "r1")})
	requireCode(t, out, apierr.Conflict, true)
	out, _ = apply(t, b, fn, IdemCmd{TenantID: tidA, Key: "k4", Hash: []byte("h"), Cmd: roleCmd(tidA, "r4")})
	require.True(t, out.(*IdemOutcome).Replayed)

	// A day later every record has expired: the next write deletes them.
	b.now = b.now.Add(2 * time.Hour)
	apply(t, b, fn, IdemCmd{TenantID: tidA, Key: "k9", Hash: []byte("h"), Cmd: roleCmd(tidA, "r9")})
	n, err = IdemKeys(b.db, tidA)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	for _, k := range []string{"k", "k2", "k3", "k4"} {
		var rec idemRecord
		found, err := getMsgpack(b.db, layout.Idem(tidA, k), &rec)
		require.NoError(t, err)
		require.False(t, found, k)
	}
}

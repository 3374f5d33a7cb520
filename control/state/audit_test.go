package state

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// A tenant's records carry the key's name from the state, read back in
// time order per tenant (another tenant's never among them), filtered
// and paged; an unknown tenant or a retention out of bounds is refused
// and writes nothing; the leader's trims drop what is past retention.
func TestApplyAuditAppendReadTrim(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidA, Name: "acme", OwnerKeyID: kidA, Placement: Placement{Shards: []string{"s1"}}})
	apply(t, b, applyCreateTenant, CreateTenantCmd{ID: tidB, Name: "beta", OwnerKeyID: kidB, Placement: Placement{Shards: []string{"s1"}}})
	rec := func(obj string, status int) wire.AuditRecord {
		return wire.AuditRecord{KeyID: kidA, Role: "owner", Action: "key.manage", ObjectType: "key", ObjectID: obj,
			Result: wire.AuditResult(status, nil), Status: status}
	}
	first := b.now.Add(time.Second)
	for i, obj := range []string{"a", "b", "c"} {
		out, _ := apply(t, b, applyAppendAudit, AppendAuditCmd{TenantID: tidA, Record: rec(obj, 200+i*200), RetentionDays: 1})
		require.Equal(t, replica.None{}, out)
	}
	apply(t, b, applyAppendAudit, AppendAuditCmd{TenantID: tidB, Record: rec("other", 200)})
	out, empty := apply(t, b, applyAppendAudit, AppendAuditCmd{TenantID: "t_01hzzzzzzzzzzzzzzzzzzzzzzq", Record: rec("x", 200)})
	requireCode(t, out, apierr.NotFound, empty)
	out, empty = apply(t, b, applyAppendAudit, AppendAuditCmd{TenantID: tidA, Record: rec("x", 200), RetentionDays: wire.MaxAuditRetentionDays + 1})
	requireCode(t, out, apierr.BadRequest, empty)

	page, err := ReadAudit(b.db, tidA, &wire.AuditFilter{}, "", 10, 100)
	require.NoError(t, err)
	require.Len(t, page.Records, 3)
	require.Empty(t, page.Cursor)
	r := page.Records[0]
	require.Equal(t, []any{"a", "owner", first, "ok"}, []any{r.ObjectID, r.KeyName, r.Time, r.Result}, "the key's name from the state")
	require.Equal(t, "http_600", page.Records[2].Result)

	p1, err := ReadAudit(b.db, tidA, &wire.AuditFilter{}, "", 2, 100)
	require.NoError(t, err)
	require.NotEmpty(t, p1.Cursor)
	p2, err := ReadAudit(b.db, tidA, &wire.AuditFilter{}, p1.Cursor, 2, 100)
	require.NoError(t, err)
	require.Equal(t, "c", p2.Records[0].ObjectID)
	errs, err := ReadAudit(b.db, tidA, &wire.AuditFilter{Result: "error"}, "", 10, 100)
	require.NoError(t, err)
	require.Len(t, errs.Records, 2)
	_, err = ReadAudit(b.db, tidA, &wire.AuditFilter{}, "bogus", 10, 100)
	require.Equal(t, apierr.BadRequest, apierr.CodeOf(err))

	require.Empty(t, AuditTrims(b.db, b.now), "nothing is a day old yet")
	trims := AuditTrims(b.db, b.now.Add(25*time.Hour))
	require.Len(t, trims, 1, "tenant B keeps the default 90 days")
	require.Equal(t, tidA, trims[0].TenantID)
	apply(t, b, applyTrimAudit, trims[0])
	page, _ = ReadAudit(b.db, tidA, &wire.AuditFilter{}, "", 10, 100)
	require.Empty(t, page.Records)
	page, _ = ReadAudit(b.db, tidB, &wire.AuditFilter{}, "", 10, 100)
	require.Len(t, page.Records, 1)
}

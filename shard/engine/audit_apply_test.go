package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/wire"
)

// Records of one entry keep their order by position; a read pages by
// the last record read and filters; a retention out of bounds is refused
// naming the field and writes nothing; a trim drops exactly the records
// older than its bound.
func TestAuditAppendReadTrim(t *testing.T) {
	t.Parallel()
	f := setupFSM(t)
	rec := func(id string) []byte {
		return replica.Command(AuditAppend.Type, replica.Encode(&AuditAppendCmd{NS: testNS, Entry: AuditEntry{KeyID: "k1", Action: "job.manage", ObjectID: id, Result: "ok", Status: 200}}))
	}
	outs := f.loc.Apply(f.now, rec("a"), rec("b"), rec("c")) // one entry
	for _, o := range outs {
		require.NoError(t, o.Err)
	}
	first := f.now
	f.advance(48 * time.Hour)
	require.Nil(t, f.apply(AuditAppend.Type, &AuditAppendCmd{NS: testNS, RetentionDays: 1, Entry: AuditEntry{KeyID: "k2", ObjectID: "d", Result: "not_found", Status: 404}}))
	require.EqualValues(t, 1, AuditRetentionDays(f.db, testNS))

	err, _ := f.apply(AuditAppend.Type, &AuditAppendCmd{NS: testNS, RetentionDays: wire.MaxAuditRetentionDays + 1, Entry: AuditEntry{ObjectID: "x"}}).(error)
	require.Equal(t, apierr.BadRequest, apierr.CodeOf(err))
	require.Contains(t, err.Error(), "audit_retention_days")

	ids := func(rs []AuditRecord) (out []string) {
		for _, r := range rs {
			out = append(out, r.ObjectID)
		}
		return out
	}
	all, more, _ := ReadAudit(f.db, testNS, 0, 0, AuditRecord{}, 10, 100, nil)
	require.False(t, more)
	require.Equal(t, []string{"a", "b", "c", "d"}, ids(all), "the refused record wrote nothing")
	require.Equal(t, first.UnixNano(), all[0].At)

	page, more, last := ReadAudit(f.db, testNS, 0, 0, AuditRecord{}, 2, 100, nil)
	require.True(t, more)
	require.Equal(t, []string{"a", "b"}, ids(page))
	page, _, _ = ReadAudit(f.db, testNS, 0, 0, last, 10, 100, nil)
	require.Equal(t, []string{"c", "d"}, ids(page))
	page, _, _ = ReadAudit(f.db, testNS, 0, 0, AuditRecord{}, 10, 100, func(r *AuditRecord) bool { return r.Status == 404 })
	require.Equal(t, []string{"d"}, ids(page))
	page, _, _ = ReadAudit(f.db, testNS, first.UnixNano()+1, 0, AuditRecord{}, 10, 100, nil)
	require.Equal(t, []string{"d"}, ids(page), "from a time")

	before, ok := AuditTrimPoint(f.db, testNS, f.now.UnixNano())
	require.True(t, ok, "the first entry's records are two days old, past a day's retention")
	require.Equal(t, 1, f.apply(AuditTrim.Type, &AuditTrimCmd{NS: testNS, Before: before}))
	all, _, _ = ReadAudit(f.db, testNS, 0, 0, AuditRecord{}, 10, 100, nil)
	require.Equal(t, []string{"d"}, ids(all))
	_, ok = AuditTrimPoint(f.db, testNS, f.now.UnixNano())
	require.False(t, ok)
}

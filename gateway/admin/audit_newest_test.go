package admin

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// memLog is a log as the shard and control read theirs: records in place
// order, read forward from a place within [from, to), a page bounded by
// limit and by scan records looked at (keep's filter applied after).
type memLog struct {
	recs  []wire.AuditRecord
	scan  int
	keep  func(*wire.AuditRecord) bool
	reads int
}

func (l *memLog) add(at time.Time, idx uint64) {
	l.recs = append(l.recs, wire.AuditRecord{ID: fmt.Sprintf("n:%d.%d.0", at.UnixNano(), idx), Time: at})
}

func (l *memLog) read(from, to time.Time, after string, limit int) (*wire.AuditPage, error) {
	l.reads++
	var start *auditPlace
	if after != "" {
		p, ok := parseAuditPlace(after)
		if !ok {
			return nil, fmt.Errorf("bad after %q", after)
		}
		start = &p
	}
	out, scanned := &wire.AuditPage{Records: []wire.AuditRecord{}}, 0
	first, _ := slices.BinarySearchFunc(l.recs, from, func(r wire.AuditRecord, t time.Time) int { return r.Time.Compare(t) })
	if start != nil {
		i, _ := slices.BinarySearchFunc(l.recs, *start, func(r wire.AuditRecord, s auditPlace) int {
			if p, _ := placeOf(&r); p.less(s) || p == s {
				return -1
			}
			return 1
		})
		first = max(first, i)
	}
	for i := first; i < len(l.recs); i++ {
		r := &l.recs[i]
		p, _ := placeOf(r)
		if r.Time.Before(from) || !to.IsZero() && !r.Time.Before(to) || start != nil && !start.less(p) {
			continue
		}
		if len(out.Records) == limit || scanned == l.scan {
			return out, nil
		}
		scanned++
		out.Cursor = p.String()
		if l.keep == nil || l.keep(r) {
			out.Records = append(out.Records, *r)
		}
	}
	out.Cursor = ""
	return out, nil
}

// walk reads every page newest first and answers the ids in the order read.
func (l *memLog) walk(t *testing.T, floor, ceil time.Time, limit int, now time.Time) []string {
	t.Helper()
	var ids []string
	before, width := "", time.Duration(0)
	for range 100_000 {
		p, w, err := newestPage(l.read, floor, ceil, before, width, limit, now)
		width = w
		require.NoError(t, err)
		require.LessOrEqual(t, len(p.Records), limit)
		for _, r := range p.Records {
			ids = append(ids, r.ID)
		}
		if p.Cursor == "" {
			return ids
		}
		require.NotEqual(t, before, p.Cursor, "a page makes progress")
		before = p.Cursor
	}
	t.Fatal("the pages never end")
	return nil
}

// want is the ids l's records within [floor, ceil) that keep keeps,
// newest first.
func (l *memLog) want(floor, ceil time.Time) []string {
	var ids []string
	for i := len(l.recs) - 1; i >= 0; i-- {
		r := &l.recs[i]
		if r.Time.Before(floor) || !ceil.IsZero() && !r.Time.Before(ceil) || l.keep != nil && !l.keep(r) {
			continue
		}
		ids = append(ids, r.ID)
	}
	return ids
}

// A log with records years apart, several at one instant, a burst of
// thousands within a millisecond and records after now, read newest
// first a page at a time, gives every record once, in exactly the
// reverse of its order: whole, within a time range, and through a filter
// that keeps few, with pages bounded by the reader's scan.
func TestNewestPagesReadTheLogBackward(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	l := &memLog{scan: 300}
	idx := uint64(0)
	next := func() uint64 { idx++; return idx }
	for _, ago := range []time.Duration{24 * 365 * 5 * time.Hour, 48 * time.Hour, 90 * time.Minute, time.Minute, time.Second} {
		l.add(now.Add(-ago), next())
	}
	same := now.Add(-30 * time.Second)
	for range 4 {
		l.add(same, next())
	}
	burst := now.Add(-20 * time.Second)
	for i := range 3_000 {
		l.add(burst.Add(time.Duration(i)*300*time.Nanosecond), next())
	}
	l.add(now.Add(-time.Millisecond), next())
	l.add(now.Add(2*time.Second), next()) // a leader's clock a little ahead
	slices.SortStableFunc(l.recs, func(a, b wire.AuditRecord) int {
		pa, _ := placeOf(&a)
		pb, _ := placeOf(&b)
		if pa.less(pb) {
			return -1
		}
		return 1
	})

	for _, limit := range []int{1, 7, 100, wire.MaxAuditLimit} {
		require.Equal(t, l.want(time.Time{}, time.Time{}), l.walk(t, time.Time{}, time.Time{}, limit, now), "limit %d", limit)
	}
	floor, ceil := now.Add(-2*time.Hour), burst.Add(time.Microsecond)
	got := l.walk(t, floor, ceil, 50, now)
	require.Equal(t, l.want(floor, ceil), got)
	require.NotEmpty(t, got)

	l.keep = func(r *wire.AuditRecord) bool { p, _ := placeOf(r); return p.idx%97 == 0 }
	require.Equal(t, l.want(time.Time{}, time.Time{}), l.walk(t, time.Time{}, time.Time{}, 5, now))

	l.keep, l.reads = nil, 0
	p, _, err := newestPage(l.read, time.Time{}, time.Time{}, "", 0, 10, now)
	require.NoError(t, err)
	require.Len(t, p.Records, 10)
	require.LessOrEqual(t, l.reads, newestReads, "a page's reads are bounded")
}

// An empty log is one empty page without a cursor.
func TestNewestPageOfAnEmptyLog(t *testing.T) {
	t.Parallel()
	l := &memLog{scan: 100}
	p, _, err := newestPage(l.read, time.Time{}, time.Time{}, "", 0, 10, time.Now())
	require.NoError(t, err)
	require.Empty(t, p.Records)
	require.Empty(t, p.Cursor)
	require.LessOrEqual(t, l.reads, 3)
}

package search

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/wire"
)

func TestSortValue(t *testing.T) {
	j := sample()
	j.CompletedAt = 7
	for s, want := range map[string]int64{
		wire.SortCreatedAt: j.CreatedAt, wire.SortUpdatedAt: j.UpdatedAt, wire.SortScheduledAt: j.ScheduledAt,
		wire.SortStartedAt: j.StartedAt, wire.SortCompletedAt: 7, wire.SortAttempt: 2, wire.SortPriority: 1, "": j.CreatedAt,
	} {
		if got := SortValue(j, s); got != want {
			t.Errorf("%s = %d, want %d", s, got, want)
		}
	}
	// desc on priority lists critical, high, normal.
	jobs := []*job.Job{{ID: "a", Priority: job.Normal}, {ID: "b", Priority: job.Critical}, {ID: "c", Priority: job.High}}
	sort.Slice(jobs, func(i, k int) bool { return Before(jobs[i], jobs[k], wire.SortPriority, wire.OrderDesc) })
	if jobs[0].ID != "b" || jobs[1].ID != "c" || jobs[2].ID != "a" {
		t.Fatalf("priority desc: %s %s %s", jobs[0].ID, jobs[1].ID, jobs[2].ID)
	}
}

func TestBeforeTiesByID(t *testing.T) {
	mk := func(id string, at int64) *job.Job { return &job.Job{ID: id, CreatedAt: at} }
	jobs := []*job.Job{mk("job_c", 5), mk("job_a", 5), mk("job_d", 1), mk("job_b", 5), mk("job_e", 9)}
	ids := func() string {
		s := ""
		for _, j := range jobs {
			s += j.ID[4:]
		}
		return s
	}
	sort.Slice(jobs, func(i, k int) bool { return Before(jobs[i], jobs[k], wire.SortCreatedAt, wire.OrderAsc) })
	if got := ids(); got != "dabce" {
		t.Fatalf("asc: %s", got)
	}
	sort.Slice(jobs, func(i, k int) bool { return Before(jobs[i], jobs[k], wire.SortCreatedAt, wire.OrderDesc) })
	if got := ids(); got != "ecbad" {
		t.Fatalf("desc: %s", got)
	}
	// A total order: never both, never neither for distinct jobs, never for itself.
	for _, a := range jobs {
		if Before(a, a, wire.SortCreatedAt, wire.OrderAsc) || Before(a, a, wire.SortCreatedAt, wire.OrderDesc) {
			t.Fatal("irreflexive")
		}
		for _, b := range jobs {
			if a != b && Before(a, b, wire.SortCreatedAt, wire.OrderAsc) == Before(b, a, wire.SortCreatedAt, wire.OrderAsc) {
				t.Fatal("not total")
			}
		}
	}
}

func TestCursorRoundTrip(t *testing.T) {
	for _, c := range []Cursor{
		{Value: 0, ID: "job_01HXAAAAAAAAAAAAAAAAAAAAAA"},
		{Value: -1, ID: "x"},
		{Value: math.MaxInt64, ID: "job_z"},
		{Value: math.MinInt64, ID: ""},
	} {
		s := EncodeCursor(c, 42)
		got, err := DecodeCursor(s, 42)
		if err != nil || got != c {
			t.Fatalf("%+v → %q → %+v, %v", c, s, got, err)
		}
		if _, err := base64.RawURLEncoding.DecodeString(s); err != nil {
			t.Fatalf("not base64url: %q", s)
		}
	}
}

func TestCursorErrors(t *testing.T) {
	s := EncodeCursor(Cursor{Value: 123, ID: "job_01"}, 42)
	_, err := DecodeCursor(s, 43)
	wantFieldErr(t, err, "cursor", "does not belong to this search")

	raw, _ := base64.RawURLEncoding.DecodeString(s)
	for i := range raw {
		b := slices.Clone(raw)
		b[i] ^= 0x01
		_, err := DecodeCursor(base64.RawURLEncoding.EncodeToString(b), 42)
		wantFieldErr(t, err, "cursor", "malformed")
	}
	for _, bad := range []string{"", "!!!", s[:len(s)-2], s + "AA", "eyJvZmZzZXQiOjUwfQ==", string(make([]byte, 600))} {
		_, err := DecodeCursor(bad, 42)
		wantFieldErr(t, err, "cursor", "malformed")
	}
}

func TestFingerprint(t *testing.T) {
	fp := func(body string) uint64 { return mustRequest(t, body).Fingerprint() }
	base := fp(`{"queue":"q","state":["pending","dead"],"tags":{"a":"1","b":"2"}}`)
	// Field order, state order, tag order, defaults, limit and cursor do not matter.
	for _, same := range []string{
		`{"tags":{"b":"2","a":"1"},"state":["dead","pending"],"queue":"q"}`,
		`{"queue":"q","state":["pending","dead"],"tags":{"a":"1","b":"2"},"sort":"created_at","order":"desc","limit":7}`,
	} {
		if fp(same) != base {
			t.Errorf("%s: fingerprint changed", same)
		}
	}
	// Any change of filter, sort or order does.
	seen := map[uint64]string{base: "base"}
	for _, other := range []string{
		`{"queue":"q2","state":["pending","dead"],"tags":{"a":"1","b":"2"}}`,
		`{"queue":"q","state":["pending"],"tags":{"a":"1","b":"2"}}`,
		`{"queue":"q","state":["pending","dead"],"tags":{"a":"1"}}`,
		`{"queue":"q","state":["pending","dead"],"tags":{"a":"1","b":"3"}}`,
		`{"queue":"q","state":["pending","dead"],"tags":{"a":"1","b":"2"},"order":"asc"}`,
		`{"queue":"q","state":["pending","dead"],"tags":{"a":"1","b":"2"},"sort":"updated_at"}`,
		`{"queue":"q","state":["pending","dead"],"tags":{"a":"1","b":"2"},"created_after":"2026-01-01"}`,
		`{"queue":"q","state":["pending","dead"],"tags":{"a":"1","b":"2"},"created_before":"2026-01-01"}`,
		`{"queue":"q","state":["pending","dead"],"tags":{"a":"1","b":"2"},"started_after":"2026-01-01"}`,
		`{"queue":"q","state":["pending","dead"],"tags":{"a":"1","b":"2"},"payload_jq":".a"}`,
		`{"queue":"q","state":["pending","dead"],"tags":{"a":"1","b":"2"},"has_errors":false}`,
		`{"queue":"q","state":["pending","dead"],"tags":{"a":"1","b":"2"},"has_errors":true}`,
		`{"queue":"q","state":["pending","dead"],"tags":{"a":"1","b":"2"},"attempt_min":1}`,
		`{"queue":"q","state":["pending","dead"],"tags":{"a":"1","b":"2"},"attempt_max":1}`,
	} {
		f := fp(other)
		if prev, dup := seen[f]; dup {
			t.Errorf("%s: same fingerprint as %s", other, prev)
		}
		seen[f] = other
	}
}

// A cursor made by one request is accepted by ParseRequest on the same
// search and refused on another.
func TestRequestCursor(t *testing.T) {
	r := mustRequest(t, `{"queue":"q","order":"asc"}`)
	c := r.NextCursor(&job.Job{ID: "job_5", CreatedAt: 50})
	next := mustRequest(t, fmt.Sprintf(`{"queue":"q","order":"asc","limit":10,"cursor":%q}`, c))
	if next.After == nil || *next.After != (Cursor{Value: 50, ID: "job_5"}) {
		t.Fatalf("after = %+v", next.After)
	}
	_, err := ParseRequest([]byte(fmt.Sprintf(`{"queue":"q2","order":"asc","cursor":%q}`, c)))
	wantFieldErr(t, err, "cursor", "does not belong to this search")
	_, err = ParseRequest([]byte(fmt.Sprintf(`{"queue":"q","cursor":%q}`, c))) // desc now
	wantFieldErr(t, err, "cursor", "does not belong to this search")
}

// Paging with AfterCursor over a set that grows between pages returns
// every original job exactly once, in order, for every sort and order.
func TestPagingNoSkipNoRepeat(t *testing.T) {
	var jobs []*job.Job
	for i := range 103 {
		jobs = append(jobs, &job.Job{
			ID: fmt.Sprintf("job_%03d", i), CreatedAt: int64(i / 7), // many ties
			Priority: job.Priority(i % 3), Attempt: i % 4, UpdatedAt: int64(i % 5),
		})
	}
	for _, s := range []string{wire.SortCreatedAt, wire.SortPriority, wire.SortAttempt, wire.SortUpdatedAt, wire.SortCompletedAt} {
		for _, order := range []string{wire.OrderAsc, wire.OrderDesc} {
			store := slices.Clone(jobs)
			var got []string
			var after *Cursor
			for page := 0; ; page++ {
				var cands []*job.Job
				for _, j := range store {
					if after == nil || AfterCursor(j, *after, s, order) {
						cands = append(cands, j)
					}
				}
				sort.Slice(cands, func(i, k int) bool { return Before(cands[i], cands[k], s, order) })
				if len(cands) == 0 {
					break
				}
				cands = cands[:min(10, len(cands))]
				for _, j := range cands {
					got = append(got, j.ID)
				}
				last := cands[len(cands)-1]
				after = &Cursor{Value: SortValue(last, s), ID: last.ID}
				// A job inserted before the cursor (in this order) is never shown.
				if s == wire.SortCreatedAt {
					at := int64(-1000 - page)
					if order == wire.OrderDesc {
						at = 1000 + int64(page)
					}
					store = append(store, &job.Job{ID: fmt.Sprintf("new_%d", page), CreatedAt: at})
				}
			}
			want := slices.Clone(jobs)
			sort.Slice(want, func(i, k int) bool { return Before(want[i], want[k], s, order) })
			if len(got) != len(want) {
				t.Fatalf("%s %s: %d jobs, want %d", s, order, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i].ID {
					t.Fatalf("%s %s: position %d is %s, want %s", s, order, i, got[i], want[i].ID)
				}
			}
		}
	}
}

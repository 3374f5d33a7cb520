package admin

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Newest first (GET /api/v1/audit?order=desc). Each log, the shard's and
// control's, is read forward only (oldest first from a place, within a
// time range), so a page of one log newest first is read backward in
// time windows: the newest window first, each read whole, older and
// wider ones while they hold too few records, narrower ones when one
// holds more than a page's reads can take. The merge and the cursor are
// audit.go's, with "before" for "after".

// auditRead reads one page of a log oldest first: its records in [from,
// to) (to zero: to the log's end) after place after ("" from from), at
// most limit, and the cursor of the rest ("" for none).
type auditRead func(from, to time.Time, after string, limit int) (*wire.AuditPage, error)

const (
	newestFirstWindow = time.Minute
	newestMinWindow   = time.Microsecond
	// newestReads bounds the reads of one log for one page; a page that
	// needs more ends early with a cursor, as a filtered page does.
	newestReads = 32
)

// auditPlace is a record's place in its log ("<time>.<index>.<pos>", the
// part of its id after "n:" or "t:"); places order records as their log
// does.
type auditPlace struct {
	at       int64
	idx, pos uint64
}

func parseAuditPlace(s string) (auditPlace, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return auditPlace{}, false
	}
	at, e1 := strconv.ParseInt(parts[0], 10, 64)
	idx, e2 := strconv.ParseUint(parts[1], 10, 64)
	pos, e3 := strconv.ParseUint(parts[2], 10, 64)
	if e1 != nil || e2 != nil || e3 != nil || at <= 0 {
		return auditPlace{}, false
	}
	return auditPlace{at, idx, pos}, true
}

func (p auditPlace) String() string { return fmt.Sprintf("%d.%d.%d", p.at, p.idx, p.pos) }

func (p auditPlace) less(q auditPlace) bool {
	if p.at != q.at {
		return p.at < q.at
	}
	if p.idx != q.idx {
		return p.idx < q.idx
	}
	return p.pos < q.pos
}

// placeOf is record r's place.
func placeOf(r *wire.AuditRecord) (auditPlace, bool) {
	_, s, _ := strings.Cut(r.ID, ":")
	return parseAuditPlace(s)
}

// newestPage is a page of one log, newest first: up to limit records at
// or after floor, before ceil (zero: none) and before place before (""
// from the newest), with the place the next page goes on before ("" when
// nothing older is left). width is the first window's (0: a minute); the
// page answers the one its next page should start with, narrower where
// the log is dense, so that paging through a busy hour does not read it
// whole for each page.
func newestPage(read auditRead, floor, ceil time.Time, before string, width time.Duration, limit int, now time.Time) (*wire.AuditPage, time.Duration, error) {
	hi := ceil
	var below *auditPlace
	if before != "" {
		p, ok := parseAuditPlace(before)
		if !ok {
			return nil, 0, fmt.Errorf("not a place of this log: %q", before)
		}
		below = &p
		if end := time.Unix(0, p.at+1); hi.IsZero() || end.Before(hi) {
			hi = end
		}
	}
	out := &wire.AuditPage{Records: []wire.AuditRecord{}}
	w, reads := newestFirstWindow, 0
	if width >= newestMinWindow {
		w = width
	}
	for {
		anchor := hi
		if anchor.IsZero() {
			anchor = now
		}
		lo, last := anchor.Add(-w), false
		if !floor.IsZero() && !lo.After(floor) {
			lo, last = floor, true
		}
		if lo.UnixNano() <= 0 {
			lo, last = time.Unix(0, 1), true
		}
		need := limit - len(out.Records)
		win, whole, n, err := readWindow(read, lo, hi, need, newestReads-reads)
		if reads += n; err != nil {
			return nil, 0, err
		}
		if !whole {
			if w > newestMinWindow && reads < newestReads {
				w /= 2 // too many to read: a narrower window
				continue
			}
			out.Cursor = goOn(hi, below, before, now)
			return out, w, nil
		}
		for k := len(win) - 1; k >= 0; k-- {
			if p, ok := placeOf(&win[k]); !ok || below != nil && !p.less(*below) {
				continue
			}
			out.Records = append(out.Records, win[k])
			if len(out.Records) == limit {
				p, _ := placeOf(&win[k])
				out.Cursor = p.String()
				if len(win) > 2*need { // dense here: a window that holds about two pages
					w = max(newestMinWindow, time.Duration(float64(w)*float64(2*need)/float64(len(win))))
				}
				return out, w, nil
			}
		}
		if last {
			return out, w, nil
		}
		hi, below = lo, nil
		older, err := read(floor, lo, "", 1)
		if reads++; err != nil {
			return nil, 0, err
		}
		if len(older.Records) == 0 && older.Cursor == "" {
			return out, w, nil // nothing older
		}
		if reads >= newestReads {
			out.Cursor = goOn(hi, nil, before, now)
			return out, w, nil
		}
		if len(win) < limit {
			w *= 2 // few here: a wider window further back
		}
	}
}

// readWindow reads [lo, hi) of a log whole, in at most calls reads, and
// keeps its newest keep records (oldest first); whole is false when the
// reads ran out first.
func readWindow(read auditRead, lo, hi time.Time, keep, calls int) (recs []wire.AuditRecord, whole bool, n int, err error) {
	after := ""
	for n < calls {
		p, err := read(lo, hi, after, wire.MaxAuditLimit)
		n++
		if err != nil {
			return nil, false, n, err
		}
		recs = append(recs, p.Records...)
		// Only the newest keep are taken, and a few more that a page's
		// place may skip (records at its time, from it on).
		if len(recs) > keep+2*wire.MaxAuditLimit {
			recs = append(recs[:0], recs[len(recs)-keep-wire.MaxAuditLimit:]...)
		}
		if p.Cursor == "" {
			return recs, true, n, nil
		}
		after = p.Cursor
	}
	return recs, false, n, nil
}

// goOn is the place a page that ran out of reads goes on before: hi's
// time (every record before it is still to read; now's for the log's
// end), or where the page began when it could not finish the window of
// its own place.
func goOn(hi time.Time, below *auditPlace, before string, now time.Time) string {
	switch {
	case below != nil:
		return before
	case hi.IsZero():
		hi = now
	}
	return auditPlace{at: hi.UnixNano()}.String()
}

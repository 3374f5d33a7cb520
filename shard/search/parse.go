package search

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/wire"
)

const maxCursorChars = 512

var sortKeys = map[string]bool{
	wire.SortCreatedAt: true, wire.SortUpdatedAt: true, wire.SortScheduledAt: true, wire.SortStartedAt: true,
	wire.SortCompletedAt: true, wire.SortPriority: true, wire.SortAttempt: true,
}

// Request is a validated POST /api/v1/jobs/search body: the filter fields
// inline, then sort, order, cursor and limit with their defaults applied.
type Request struct {
	Filter
	Sort   string // one of the Sort* keys; default created_at
	Order  string // asc or desc; default desc
	Cursor string // the opaque cursor as sent; "" = first page
	Limit  int    // 1..MaxLimit; default wire.DefaultSearchLimit

	// After is the decoded Cursor, already checked against this request's
	// fingerprint; nil on the first page. Return jobs for which
	// AfterCursor(j, *After, Sort, Order) holds.
	After *Cursor
}

// NextCursor is the cursor of the page that follows last, the last job of
// the current page.
func (r *Request) NextCursor(last *job.Job) string {
	return EncodeCursor(Cursor{Value: SortValue(last, r.Sort), ID: last.ID}, r.Fingerprint())
}

// ParseRequest parses and validates a search body strictly: an unknown
// field, a value of the wrong type or an invalid value is a 400 naming the
// field. An empty body is a search with every default.
func ParseRequest(body []byte) (*Request, error) {
	fields, err := object(body, "", true)
	if err != nil {
		return nil, err
	}
	r := &Request{Sort: wire.SortCreatedAt, Order: wire.OrderDesc, Limit: wire.DefaultSearchLimit}
	for _, name := range sortedNames(fields) {
		raw := fields[name]
		if isNull(raw) {
			continue
		}
		switch name {
		case "sort":
			s, err := str(name, raw)
			if err != nil {
				return nil, err
			}
			if !sortKeys[s] {
				return nil, fieldErr(name, "unknown sort key %q; use created_at, updated_at, scheduled_at, started_at, completed_at, priority or attempt", clip(s))
			}
			r.Sort = s
		case "order":
			s, err := str(name, raw)
			if err != nil {
				return nil, err
			}
			if s != wire.OrderAsc && s != wire.OrderDesc {
				return nil, fieldErr(name, "must be asc or desc; got %q", clip(s))
			}
			r.Order = s
		case "cursor":
			s, err := str(name, raw)
			if err != nil {
				return nil, err
			}
			r.Cursor = s
		case "limit":
			n, err := integer(name, raw)
			if err != nil {
				return nil, err
			}
			if n < 0 || n > wire.MaxSearchLimit {
				return nil, fieldErr(name, "must be between 1 and %d (0 or absent means %d); got %d", wire.MaxSearchLimit, wire.DefaultSearchLimit, n)
			}
			if n > 0 {
				r.Limit = int(n)
			}
		default:
			if err := setFilterField(&r.Filter, "", name, raw); err != nil {
				return nil, err
			}
		}
	}
	if err := r.Filter.Validate(""); err != nil {
		return nil, err
	}
	if r.Cursor != "" {
		c, err := DecodeCursor(r.Cursor, r.Fingerprint())
		if err != nil {
			return nil, err
		}
		r.After = &c
	}
	return r, nil
}

// ParseFilter parses and validates the "filter" object of a bulk body. It
// names fields as the client sent them, under "filter." (for example
// "filter.state"). A missing or null filter is a 400: a bulk operation must
// say what it applies to; use Filter.IsEmpty to refuse {} as well.
func ParseFilter(raw []byte) (*Filter, error) {
	fields, err := object(raw, "filter", false)
	if err != nil {
		return nil, err
	}
	f := &Filter{}
	for _, name := range sortedNames(fields) {
		if v := fields[name]; !isNull(v) {
			if err := setFilterField(f, "filter.", name, v); err != nil {
				return nil, err
			}
		}
	}
	if err := f.Validate("filter."); err != nil {
		return nil, err
	}
	return f, nil
}

// setFilterField parses one filter field. Values are checked here for
// type and syntax; cross-field rules are in Filter.Validate.
func setFilterField(f *Filter, prefix, name string, raw json.RawMessage) error {
	field := prefix + name
	var err error
	switch name {
	case "queue":
		f.Queue, err = nonEmpty(field, raw)
	case "state":
		f.States, err = states(field, raw)
	case "priority":
		var s string
		if s, err = nonEmpty(field, raw); err == nil {
			var p job.Priority
			if p, err = job.ParsePriority(s); err != nil {
				return fieldErr(field, "unknown priority %q; use critical, high or normal", clip(s))
			}
			f.Priority = &p
		}
	case "tags":
		f.Tags, err = tags(field, raw)
	case "payload_contains":
		f.PayloadContains, err = nonEmpty(field, raw)
	case "payload_jq":
		f.PayloadJQ, err = nonEmpty(field, raw)
	case "created_after":
		f.Created.After, err = timestamp(field, raw)
	case "created_before":
		f.Created.Before, err = timestamp(field, raw)
	case "scheduled_after":
		f.Scheduled.After, err = timestamp(field, raw)
	case "scheduled_before":
		f.Scheduled.Before, err = timestamp(field, raw)
	case "started_after":
		f.Started.After, err = timestamp(field, raw)
	case "started_before":
		f.Started.Before, err = timestamp(field, raw)
	case "completed_after":
		f.Completed.After, err = timestamp(field, raw)
	case "completed_before":
		f.Completed.Before, err = timestamp(field, raw)
	case "expire_after":
		f.Expire.After, err = timestamp(field, raw)
	case "expire_before":
		f.Expire.Before, err = timestamp(field, raw)
	case "worker_id":
		f.WorkerID, err = nonEmpty(field, raw)
	case "has_errors":
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return fieldErr(field, "must be true or false")
		}
		f.HasErrors = &b
	case "error_contains":
		f.ErrorContains, err = nonEmpty(field, raw)
	case "batch_id":
		f.BatchID, err = nonEmpty(field, raw)
	case "unique_key":
		f.UniqueKey, err = nonEmpty(field, raw)
	case "concurrency_key":
		f.ConcurrencyKey, err = nonEmpty(field, raw)
	case "fairness_key":
		f.FairnessKey, err = nonEmpty(field, raw)
	case "attempt_min":
		f.AttemptMin, err = attempt(field, raw)
	case "attempt_max":
		f.AttemptMax, err = attempt(field, raw)
	case "job_id_prefix":
		f.JobIDPrefix, err = nonEmpty(field, raw)
	case "held_reason":
		f.HeldReason, err = nonEmpty(field, raw)
	case "held_budget":
		f.HeldBudget, err = nonEmpty(field, raw)
	default:
		return fieldErr(field, "unknown field")
	}
	return err
}

// object decodes one JSON object into its raw fields. A body that is not
// JSON is invalid_json (there is no field to name); a non-object is a 400
// naming field when there is one.
func object(b []byte, field string, emptyOK bool) (map[string]json.RawMessage, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 && emptyOK {
		return nil, nil
	}
	if len(b) == 0 || isNull(b) || b[0] != '{' {
		if field != "" {
			return nil, fieldErr(field, "must be a JSON object")
		}
		return nil, apierr.New(apierr.InvalidJSON, "request body must be a JSON object")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	var m map[string]json.RawMessage
	if err := d.Decode(&m); err != nil {
		return nil, apierr.New(apierr.InvalidJSON, "malformed JSON: %v", err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, apierr.New(apierr.InvalidJSON, "request body must hold one JSON object")
	}
	return m, nil
}

// sortedNames orders fields so that, with several bad fields, the error
// is always about the same one.
func sortedNames(m map[string]json.RawMessage) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func isNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

func str(field string, raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fieldErr(field, "must be a string")
	}
	return s, nil
}

// nonEmpty refuses "": an empty filter value is almost always a client bug
// (an unfilled form field), and a filter should be omitted to be skipped.
func nonEmpty(field string, raw json.RawMessage) (string, error) {
	s, err := str(field, raw)
	if err == nil && s == "" {
		return "", fieldErr(field, "must not be empty (omit the field to skip this filter)")
	}
	return s, err
}

// integer accepts a JSON number with an integral value ("5", "5.0", "5e2").
func integer(field string, raw json.RawMessage) (int64, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil || !isNumber(raw) {
		return 0, fieldErr(field, "must be an integer")
	}
	if i, err := n.Int64(); err == nil {
		return i, nil
	}
	fl, err := n.Float64()
	if err != nil || fl != math.Trunc(fl) || math.Abs(fl) > 1<<53 {
		return 0, fieldErr(field, "must be an integer")
	}
	return int64(fl), nil
}

// isNumber tells a JSON number from a string: json.Number also accepts a
// quoted number, which a strict API must not.
func isNumber(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

func attempt(field string, raw json.RawMessage) (*int, error) {
	n, err := integer(field, raw)
	if err != nil {
		return nil, err
	}
	if n < 0 || n > MaxAttemptFilter {
		return nil, fieldErr(field, "must be between 0 and %d; got %d", MaxAttemptFilter, n)
	}
	v := int(n)
	return &v, nil
}

// states accepts ["pending","dead"] or a single "pending".
func states(field string, raw json.RawMessage) ([]job.State, error) {
	var names []string
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		if err := json.Unmarshal(raw, &names); err != nil {
			return nil, fieldErr(field, "must be a state name or an array of state names")
		}
		if len(names) == 0 {
			return nil, fieldErr(field, "must name at least one state (omit the field to match every state)")
		}
	} else {
		s, err := str(field, raw)
		if err != nil {
			return nil, fieldErr(field, "must be a state name or an array of state names")
		}
		names = []string{s}
	}
	out := make([]job.State, 0, len(names))
	var seen [job.MaxState + 1]bool
	for _, n := range names {
		s, err := job.ParseState(n)
		if err != nil {
			return nil, fieldErr(field, "unknown state %q; use scheduled, pending, active, completed, retrying, dead, cancelled or held", clip(n))
		}
		if seen[s] {
			return nil, fieldErr(field, "state %q is listed twice", n)
		}
		seen[s] = true
		out = append(out, s)
	}
	return out, nil
}

func tags(field string, raw json.RawMessage) (map[string]string, error) {
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		return nil, fieldErr(field, "must be an object of string values")
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fieldErr(field, "must be an object of string values")
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// timestamp accepts an RFC 3339 time or a bare date (midnight UTC), and
// returns unix nanoseconds like the job record.
func timestamp(field string, raw json.RawMessage) (*int64, error) {
	const hint = "must be an RFC 3339 time like 2026-02-10T00:00:00Z or a date like 2026-02-10"
	s, err := str(field, raw)
	if err != nil {
		return nil, fieldErr(field, "%s", hint)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if t, err = time.Parse(time.DateOnly, s); err != nil {
			return nil, fieldErr(field, "%s; got %s", hint, strconv.Quote(clip(s)))
		}
	}
	// UnixNano is undefined outside about 1678-2262.
	if t.Year() < 1678 || t.Year() > 2261 {
		return nil, fieldErr(field, "must be between the years 1678 and 2261")
	}
	ns := t.UnixNano()
	return &ns, nil
}

package service

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Limits are the tenant plan's limits a request carries (set by the
// gateway, shard/api/planheaders.go); zero values are no limit.
type Limits struct {
	// MaxPendingJobs bounds the namespace's unfinished jobs (pending,
	// scheduled, retrying, held, active): an enqueue that would pass it is
	// refused whole, 429 quota_exceeded.
	MaxPendingJobs int64
	// MaxPayloadBytes bounds every value a request stores for a job, each
	// on its own: a payload (of a job, a batch's job, a chain step or
	// handler, a batch callback, a schedule and so every job it fires), a
	// chain definition, the tags' keys and values, a result, progress and
	// a checkpoint. Past it: 413 too_large naming the field. Each field
	// keeps its protocol limit (wire) too; the lower one decides.
	MaxPayloadBytes int64
	// ExecutionsLeft, when positive, is what the plan's monthly
	// executions cap still allows this month: a fetch/batch leases at
	// most that many jobs.
	ExecutionsLeft int64
}

// size refuses n stored bytes of field (what names them in the message)
// over the protocol's limit or the plan's max_payload_bytes: the one
// place that decides how large a stored value may be.
func (l Limits) size(field, what string, n, protocol int) error {
	if n > protocol {
		return apierr.OfField(apierr.TooLarge, field, "%s is %d bytes; the limit is %d", what, n, protocol)
	}
	if l.MaxPayloadBytes > 0 && int64(n) > l.MaxPayloadBytes {
		return apierr.OfField(apierr.TooLarge, field, "%s is %d bytes, over the plan's max_payload_bytes limit of %d", what, n, l.MaxPayloadBytes)
	}
	return nil
}

// checkJSON validates an optional JSON value a caller sends (a payload,
// a result, progress, a checkpoint) within protocol bytes and the plan's
// limit: the decoder checked its syntax but not its text, and a value
// stored with invalid UTF-8 would be served back as invalid JSON. Its
// nesting is bounded too (wire.MaxJSONDepth): workers must decode it.
func (l Limits) checkJSON(field string, raw json.RawMessage, protocol int) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if err := l.size(field, field, len(raw), protocol); err != nil {
		return nil, err
	}
	if !utf8.Valid(raw) {
		return nil, apierr.Field(field, "%s must be valid UTF-8", field)
	}
	if d := wire.JSONDepth(raw); d > wire.MaxJSONDepth {
		return nil, apierr.Field(field, "%s nests arrays and objects %d levels deep; the limit is %d", field, d, wire.MaxJSONDepth)
	}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	return raw, nil
}

// leaseAtMost is how many jobs a fetch/batch asking for n may lease under
// the plan's executions left this month.
func (l Limits) leaseAtMost(n int) int {
	if l.ExecutionsLeft > 0 && int64(n) > l.ExecutionsLeft {
		return int(l.ExecutionsLeft)
	}
	return n
}

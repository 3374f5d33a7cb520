package engine

import (
	"cmp"
	"slices"
	"unicode/utf8"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// An endpoint's delivery log: its last wire.WebhookDeliveryLogSize
// attempts (and the runner's notes: events trimmed before they were
// sent, an event given up), replicated so every node answers it and a
// leader change keeps it. The leader's runner hands what it did to the
// progress it records (WebhookProgressLogged), a test or a redelivery its
// own attempt (WebhookLog); the apply numbers the records from the
// endpoint's Logged and deletes the ones that fall off the end, so the
// log never holds more than its size.

// WebhookAttempt is one record of a delivery log. At and the rest are
// the leader's, as it made the attempt.
type WebhookAttempt struct {
	EventID   string `codec:"e,omitempty"`
	Type      string `codec:"t,omitempty"`
	At        int64  `codec:"a"` // unix ns
	Attempt   int    `codec:"n,omitempty"`
	Status    int    `codec:"s,omitempty"` // 0: no answer
	LatencyUs int64  `codec:"l,omitempty"`
	Error     string `codec:"x,omitempty"` // its first wire.WebhookDeliveryError bytes
	OK        bool   `codec:"ok,omitempty"`
}

// WebhookLogCmd adds records to an endpoint's delivery log: a test
// event's or a redelivery's attempt.
type WebhookLogCmd struct {
	NS  string           `codec:"ns"`
	ID  string           `codec:"i"`
	Log []WebhookAttempt `codec:"l"`
}

func (c *WebhookLogCmd) namespace() string { return c.NS }

// applyWebhookLog adds the records; it reports whether the endpoint is
// there (a log of one deleted meanwhile is dropped).
func (e *Engine) applyWebhookLog(tx *replica.Tx, c *WebhookLogCmd) (bool, error) {
	w, ok := ReadWebhook(tx, c.NS, c.ID)
	if !ok {
		return false, nil
	}
	appendDeliveryLog(tx, c.NS, w, c.Log)
	putWebhook(tx, c.NS, w)
	return true, nil
}

// applyWebhookProgressLogged is applyWebhookProgressMetered that also
// adds the runner's records to the delivery log.
func (e *Engine) applyWebhookProgressLogged(tx *replica.Tx, c *WebhookProgressCmd) (bool, error) {
	if w, ok := ReadWebhook(tx, c.NS, c.ID); ok && len(c.Log) > 0 {
		appendDeliveryLog(tx, c.NS, w, c.Log)
		putWebhook(tx, c.NS, w)
	}
	return e.applyWebhookProgressMetered(tx, c)
}

// appendDeliveryLog writes recs after w's newest record (only the last
// WebhookDeliveryLogSize of them count) and deletes those that fall off
// the log; the caller writes w, whose Logged it moved.
func appendDeliveryLog(tx *replica.Tx, ns string, w *WebhookRecord, recs []WebhookAttempt) {
	if n := len(recs); n > wire.WebhookDeliveryLogSize {
		recs = recs[n-wire.WebhookDeliveryLogSize:]
	}
	for i := range recs {
		a := recs[i]
		a.Error = CutDeliveryError(a.Error)
		w.Logged++
		must(tx.Set(keys.WebhookDelivery(ns, w.ID, w.Logged), replica.Encode(&a), nil))
	}
	// The records below the log's first are gone already, but those
	// the new ones pushed out: at most len(recs) point deletes.
	first := oldestKept(w.Logged)
	for n := oldestKept(w.Logged - uint64(len(recs))); n < first; n++ {
		must(tx.Delete(keys.WebhookDelivery(ns, w.ID, n), nil))
	}
}

// CutDeliveryError is the part of an attempt's error its delivery log
// keeps: the first wire.WebhookDeliveryError bytes, cut at a character.
func CutDeliveryError(s string) string {
	if len(s) <= wire.WebhookDeliveryError {
		return s
	}
	n := wire.WebhookDeliveryError
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// oldestKept is the number of the oldest record a log whose newest is
// logged keeps.
func oldestKept(logged uint64) uint64 {
	if logged <= wire.WebhookDeliveryLogSize {
		return 1
	}
	return logged - wire.WebhookDeliveryLogSize + 1
}

// dropDeliveryLog deletes w's delivery log (its endpoint is deleted).
func dropDeliveryLog(tx *replica.Tx, ns string, w *WebhookRecord) {
	for n := oldestKept(w.Logged); n <= w.Logged && w.Logged > 0; n++ {
		must(tx.Delete(keys.WebhookDelivery(ns, w.ID, n), nil))
	}
}

// ReadDeliveryLog returns the endpoint's delivery log as applied in r,
// newest attempt first: a runner records what it did up to a second
// after a test or a redelivery may have logged theirs, so the order
// written is not quite the order made.
func ReadDeliveryLog(r pebble.Reader, ns, id string) []WebhookAttempt {
	p := keys.WebhookDeliveries(ns, id)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	defer it.Close()
	out := []WebhookAttempt{}
	for ok := it.Last(); ok && len(out) < wire.WebhookDeliveryLogSize; ok = it.Prev() {
		var a WebhookAttempt
		must(replica.Decode(it.Value(), &a))
		out = append(out, a)
	}
	slices.SortStableFunc(out, func(a, b WebhookAttempt) int { return cmp.Compare(b.At, a.At) })
	return out
}

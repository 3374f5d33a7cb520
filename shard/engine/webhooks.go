package engine

import (
	"errors"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/internal/whsign"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// A namespace's lifecycle webhook endpoints (keys.Webhook): their
// settings, their HMAC secrets, and the cursor of the leader's delivery
// into the namespace's event log, replicated so a new leader resumes
// where the last one's progress was recorded (at-least-once). The
// service validates and makes ids and secrets; the apply only stores.

// WebhookRecord is one endpoint.
type WebhookRecord struct {
	ID          string       `codec:"i"`
	URL         string       `codec:"u"`
	Events      []string     `codec:"e"`           // wire.WebhookEvents names, or "*"
	Queues      []string     `codec:"q,omitempty"` // tenancy patterns; empty: every queue
	Enabled     bool         `codec:"en"`
	Description string       `codec:"d,omitempty"`
	Secrets     []SigningKey `codec:"s,omitempty"` // HMAC keys, oldest first
	// Cursor is the sequence number of the last event delivered (or
	// passed over by the filter).
	Cursor       uint64 `codec:"c"`
	FailingSince int64  `codec:"fs,omitempty"` // unix ns; 0 while deliveries succeed
	// DisabledAt and DisabledReason are set when the leader disabled
	// the endpoint for failing; an update that enables it clears them.
	DisabledAt     int64  `codec:"da,omitempty"`
	DisabledReason string `codec:"dr,omitempty"`
	CreatedAt      int64  `codec:"ca"`
	UpdatedAt      int64  `codec:"ua"`
	// Logged is how many records its delivery log was ever given
	// (webhook_log.go): the number of the newest.
	Logged uint64 `codec:"lg,omitempty"`
}

// Delivering reports whether the leader delivers to the endpoint.
func (w *WebhookRecord) Delivering() bool { return w.Enabled && w.DisabledAt == 0 }

// WebhookCmd creates or replaces an endpoint's settings (URL, Events,
// Queues, Enabled, Description of Hook; a create's Secrets too).
type WebhookCmd struct {
	NS   string        `codec:"ns"`
	Hook WebhookRecord `codec:"h"`
}

func (c *WebhookCmd) namespace() string { return c.NS }

// WebhookIDCmd names one endpoint.
type WebhookIDCmd struct {
	NS string `codec:"ns"`
	ID string `codec:"i"`
}

func (c *WebhookIDCmd) namespace() string { return c.NS }

// WebhookSecretCmd adds Key (HMAC) to an endpoint's secrets; the others
// sign beside it for OverlapNs.
type WebhookSecretCmd struct {
	NS        string     `codec:"ns"`
	ID        string     `codec:"i"`
	Key       SigningKey `codec:"k"`
	OverlapNs int64      `codec:"o"`
}

func (c *WebhookSecretCmd) namespace() string { return c.NS }

// WebhookProgressCmd is the leader's delivery progress on an endpoint
// whose settings were last changed at Updated: the cursor (never moved
// back), the failing run's start (0: none), and Disable with its reason
// for an endpoint failing too long. Attempts is how many delivery
// attempts the leader made since its last record (webhook_deliveries,
// metered under WebhookProgressMetered only).
type WebhookProgressCmd struct {
	NS           string `codec:"ns"`
	ID           string `codec:"i"`
	Updated      int64  `codec:"u"`
	Cursor       uint64 `codec:"c"`
	FailingSince int64  `codec:"fs,omitempty"`
	Disable      bool   `codec:"d,omitempty"`
	Reason       string `codec:"r,omitempty"`
	Attempts     int    `codec:"n,omitempty"`
	// Log is what the leader's runner did since its last record, for the
	// delivery log (under WebhookProgressLogged only).
	Log []WebhookAttempt `codec:"l,omitempty"`
}

func (c *WebhookProgressCmd) namespace() string { return c.NS }

func webhookNotFound(id string) error { return apierr.New(apierr.NotFound, "webhook %s not found", id) }

// applyWebhookCreate stores a new endpoint, its cursor at the end of the
// log so far: it receives the events of later entries.
func (e *Engine) applyWebhookCreate(tx *replica.Tx, c *WebhookCmd) (*WebhookRecord, error) {
	if _, ok := ReadWebhook(tx, c.NS, c.Hook.ID); ok {
		return nil, apierr.New(apierr.Conflict, "webhook %s exists", c.Hook.ID)
	}
	if n := len(ReadWebhooks(tx, c.NS)); n >= wire.MaxWebhooks {
		return nil, apierr.New(apierr.Conflict, "the namespace has %d webhooks; the limit is %d", n, wire.MaxWebhooks)
	}
	w := c.Hook
	w.Cursor = tx.Index<<EventSeqBits | eventSeqMask
	w.FailingSince, w.DisabledAt, w.DisabledReason, w.Logged = 0, 0, "", 0
	w.CreatedAt, w.UpdatedAt = tx.Now.UnixNano(), tx.Now.UnixNano()
	registerNamespace(tx, c.NS)
	putWebhook(tx, c.NS, &w)
	return &w, nil
}

// applyWebhookUpdate replaces the settings; the cursor and secrets stay.
// Enabling clears a disable for failing.
func (e *Engine) applyWebhookUpdate(tx *replica.Tx, c *WebhookCmd) (*WebhookRecord, error) {
	w, ok := ReadWebhook(tx, c.NS, c.Hook.ID)
	if !ok {
		return nil, webhookNotFound(c.Hook.ID)
	}
	w.URL, w.Events, w.Queues, w.Enabled, w.Description = c.Hook.URL, c.Hook.Events, c.Hook.Queues, c.Hook.Enabled, c.Hook.Description
	if w.Enabled {
		w.FailingSince, w.DisabledAt, w.DisabledReason = 0, 0, ""
	}
	w.UpdatedAt = touched(w, tx)
	putWebhook(tx, c.NS, w)
	return w, nil
}

func (e *Engine) applyWebhookDelete(tx *replica.Tx, c *WebhookIDCmd) (replica.None, error) {
	w, ok := ReadWebhook(tx, c.NS, c.ID)
	if !ok {
		return replica.None{}, webhookNotFound(c.ID)
	}
	must(tx.Delete(keys.Webhook(c.NS, c.ID), nil))
	dropDeliveryLog(tx, c.NS, w)
	return replica.None{}, nil
}

// applyWebhookSecret adds the secret by whsign's rotation rule at the
// entry's clock.
func (e *Engine) applyWebhookSecret(tx *replica.Tx, c *WebhookSecretCmd) (*WebhookRecord, error) {
	w, ok := ReadWebhook(tx, c.NS, c.ID)
	if !ok {
		return nil, webhookNotFound(c.ID)
	}
	set, err := (&SigningKeySet{Keys: w.Secrets}).KeySet()
	if err != nil {
		return nil, err
	}
	k, err := whsign.ParseKey(c.Key.ID, c.Key.Secret)
	if err != nil || k.Scheme() != whsign.HMAC {
		return nil, apierr.New(apierr.BadRequest, "webhook secret: not an HMAC secret")
	}
	set = set.Rotate(k, tx.Now, time.Duration(c.OverlapNs))
	w.Secrets = make([]SigningKey, len(set))
	for i, k := range set {
		w.Secrets[i] = SigningKey{ID: k.ID, Secret: k.Secret()}
		if !k.NotAfter.IsZero() {
			w.Secrets[i].NotAfter = k.NotAfter.UnixNano()
		}
	}
	w.UpdatedAt = touched(w, tx)
	putWebhook(tx, c.NS, w)
	return w, nil
}

// applyWebhookProgress records the leader's progress. It reports whether
// the endpoint is still there; a disable applies only to the settings the
// leader delivered by (Updated), so an update meanwhile stands.
func (e *Engine) applyWebhookProgress(tx *replica.Tx, c *WebhookProgressCmd) (bool, error) {
	w, ok := ReadWebhook(tx, c.NS, c.ID)
	if !ok {
		return false, nil
	}
	w.Cursor = max(w.Cursor, c.Cursor)
	if w.UpdatedAt == c.Updated {
		w.FailingSince = c.FailingSince
		if c.Disable && w.DisabledAt == 0 {
			w.DisabledAt, w.DisabledReason = tx.Now.UnixNano(), c.Reason
			e.logEvent(tx, c.NS, Event{Type: EvWebhookDisabled, Subject: w.ID, Detail: c.Reason})
		}
	}
	putWebhook(tx, c.NS, w)
	return true, nil
}

// applyWebhookProgressMetered is applyWebhookProgress that meters the
// attempts, made whether or not the endpoint is still there.
func (e *Engine) applyWebhookProgressMetered(tx *replica.Tx, c *WebhookProgressCmd) (bool, error) {
	e.webhookDelivered(tx, c.NS, c.Attempts)
	return e.applyWebhookProgress(tx, c)
}

// touched is an endpoint's new UpdatedAt: the entry's clock, and always
// later than the last, since the leader's runner restarts on a change of
// it (two changes in one entry share its clock).
func touched(w *WebhookRecord, tx *replica.Tx) int64 { return max(tx.Now.UnixNano(), w.UpdatedAt+1) }

func putWebhook(tx *replica.Tx, ns string, w *WebhookRecord) {
	must(tx.Set(keys.Webhook(ns, w.ID), replica.Encode(w), nil))
}

// ReadWebhook returns one of ns's endpoints as last applied in r.
func ReadWebhook(r pebble.Reader, ns, id string) (*WebhookRecord, bool) {
	v, closer, err := r.Get(keys.Webhook(ns, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false
	}
	must(err)
	defer closer.Close()
	w := &WebhookRecord{}
	must(replica.Decode(v, w))
	return w, true
}

// ReadWebhooks returns ns's endpoints in id order.
func ReadWebhooks(r pebble.Reader, ns string) []*WebhookRecord {
	p := keys.WebhookPrefix(ns)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	must(err)
	defer it.Close()
	var out []*WebhookRecord
	for it.First(); it.Valid(); it.Next() {
		w := &WebhookRecord{}
		must(replica.Decode(it.Value(), w))
		out = append(out, w)
	}
	return out
}

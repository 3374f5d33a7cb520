package client

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// QueuePushSpec makes a queue a push queue: Jobbie POSTs each job to URL
// (https) and the answer acks or fails it (docs/api/push.md). A zero
// Mode is wire.PushAlways, a zero Timeout and MaxInFlight the defaults
// (30s, 10).
type QueuePushSpec struct {
	URL string
	// Mode is wire.PushAlways or wire.PushWhenNoWorkers (push only while
	// no worker fetches from the queue).
	Mode string
	// Timeout bounds one delivery, 1s to 15m.
	Timeout time.Duration
	// MaxInFlight is how many deliveries may run at once, 1 to 1000.
	MaxInFlight int
	// Headers are sent with every delivery.
	Headers map[string]string
}

// QueuePush is a push queue's settings as read, with Disabled set once a
// handler answered 410 Gone (the next PutQueue enables push again).
type QueuePush = wire.QueuePush

// PushDisabled says why and since when a queue's push is disabled.
type PushDisabled = wire.PushDisabled

func (p *QueuePushSpec) wire() *wire.QueuePushRequest {
	if p == nil {
		return nil
	}
	w := &wire.QueuePushRequest{URL: p.URL, Mode: p.Mode, Timeout: wire.Duration(p.Timeout), Headers: maps.Clone(p.Headers)}
	if p.MaxInFlight != 0 {
		w.MaxInFlight = strconv.AppendInt(nil, int64(p.MaxInFlight), 10)
	}
	return w
}

// pushSpecOf is the spec a read's push settings came from; nil for a pull
// queue.
func pushSpecOf(p *QueuePush) (*QueuePushSpec, error) {
	if p == nil {
		return nil, nil
	}
	s := &QueuePushSpec{URL: p.URL, Mode: p.Mode, MaxInFlight: p.MaxInFlight}
	if len(p.Headers) > 0 {
		s.Headers = maps.Clone(p.Headers)
	}
	if p.Timeout != "" {
		raw, _ := json.Marshal(p.Timeout) // a plain string: cannot fail
		d, _, err := wire.ParseDuration(raw)
		if err != nil {
			return nil, fmt.Errorf("push.timeout: %w", err)
		}
		s.Timeout = d
	}
	return s, nil
}

// WebhookKey is one of a namespace's public keys that sign push
// deliveries and webhooks: Key ("whpk_…") is what NewWebhookVerifier
// takes. NotAfter is set on a key a rotation replaced: it signs beside
// the new one until then.
type WebhookKey = wire.WebhookKey

// WebhookSigningKeys lists the namespace's public signing keys still in
// use, oldest first (webhook.read); the namespace's first key is made on
// the first read. These are not the keys that sign API keys
// (ListSigningKeys, operator only).
func (c *Client) WebhookSigningKeys(ctx context.Context) ([]WebhookKey, error) {
	var out wire.WebhookKeyList
	if _, err := c.do(ctx, "GET", "/api/v1/signing-keys", nil, &out); err != nil {
		return nil, err
	}
	return out.Keys, nil
}

// RotateWebhookSigningKeys adds a new signing key (webhook.manage, and a
// key for every queue); the older keys go on signing beside it for
// wire.SigningKeyOverlap, so handlers can move to the new one. It
// returns the keys after the rotation.
func (c *Client) RotateWebhookSigningKeys(ctx context.Context) ([]WebhookKey, error) {
	var out wire.WebhookKeyList
	if _, err := c.do(ctx, "POST", "/api/v1/signing-keys/rotate", struct{}{}, &out); err != nil {
		return nil, err
	}
	return out.Keys, nil
}

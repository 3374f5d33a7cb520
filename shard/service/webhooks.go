package service

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/whsign"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A namespace's lifecycle webhook endpoints: validated here, stored by the
// engine (webhooks.go), delivered by the leader (shard/webhooks).

// CreateWebhook answers POST /api/v1/webhooks.
func (s *Service) CreateWebhook(ctx context.Context, ns string, r *wire.WebhookRequest) (*wire.Webhook, error) {
	w, err := s.toWebhook(ctx, ns, r)
	if err != nil {
		return nil, err
	}
	w.ID = s.NewID("wh_")
	// Its cursor starts at the log's end: the log must be on first, or
	// the endpoint would begin before the log's start and be told it
	// missed events that never were.
	if err := s.meter(ctx); err != nil {
		return nil, err
	}
	var secret string
	if r.Secret {
		k, err := s.newWebhookSecret()
		if err != nil {
			return nil, err
		}
		secret = k.Secret
		w.Secrets = []engine.SigningKey{k}
	}
	rec, echo, err := propose(ctx, s, ns, engine.WebhookCreate, &engine.WebhookCmd{NS: ns, Hook: *w}, []byte(secret))
	if err != nil {
		return nil, err
	}
	v := WebhookView(rec)
	v.Secret = string(echo) // a replay's is the first answer's
	return v, nil
}

// UpdateWebhook answers PUT /api/v1/webhooks/{id}: the whole settings.
func (s *Service) UpdateWebhook(ctx context.Context, ns, id string, r *wire.WebhookRequest) (*wire.Webhook, error) {
	if _, err := s.readWebhook(ns, id); err != nil {
		return nil, err
	}
	if r.Secret {
		return nil, apierr.Field("secret", "secret: an endpoint's secret is made at its creation or by POST /api/v1/webhooks/{id}/rotate-secret")
	}
	w, err := s.toWebhook(ctx, ns, r)
	if err != nil {
		return nil, err
	}
	w.ID = id
	rec, err := engine.WebhookUpdate.Propose(ctx, s.node, &engine.WebhookCmd{NS: ns, Hook: *w})
	if err != nil {
		return nil, err
	}
	return WebhookView(rec), nil
}

// DeleteWebhook answers DELETE /api/v1/webhooks/{id}.
func (s *Service) DeleteWebhook(ctx context.Context, ns, id string) error {
	if _, err := s.readWebhook(ns, id); err != nil {
		return err
	}
	_, err := engine.WebhookDelete.Propose(ctx, s.node, &engine.WebhookIDCmd{NS: ns, ID: id})
	return err
}

// RotateWebhookSecret answers POST /api/v1/webhooks/{id}/rotate-secret:
// a new secret, shown in this answer only; the older ones sign beside it
// for wire.WebhookSecretOverlap.
func (s *Service) RotateWebhookSecret(ctx context.Context, ns, id string) (*wire.Webhook, error) {
	if _, err := s.readWebhook(ns, id); err != nil {
		return nil, err
	}
	k, err := s.newWebhookSecret()
	if err != nil {
		return nil, err
	}
	rec, err := engine.WebhookSecret.Propose(ctx, s.node, &engine.WebhookSecretCmd{NS: ns, ID: id, Key: k,
		OverlapNs: int64(wire.WebhookSecretOverlap)})
	if err != nil {
		return nil, err
	}
	v := WebhookView(rec)
	v.Secret = k.Secret
	return v, nil
}

// Webhook answers GET /api/v1/webhooks/{id}.
func (s *Service) Webhook(ns, id string) (*wire.Webhook, error) {
	w, err := s.readWebhook(ns, id)
	if err != nil {
		return nil, err
	}
	return WebhookView(w), nil
}

// Webhooks answers GET /api/v1/webhooks.
func (s *Service) Webhooks(ns string) (*wire.WebhookList, error) {
	if err := CheckNamespace(ns); err != nil {
		return nil, err
	}
	out := &wire.WebhookList{Webhooks: []wire.Webhook{}}
	for _, w := range engine.ReadWebhooks(s.node.DB(), ns) {
		out.Webhooks = append(out.Webhooks, *WebhookView(w))
	}
	return out, nil
}

// WebhookRecord is one endpoint as applied on this node (404 if none).
func (s *Service) WebhookRecord(ns, id string) (*engine.WebhookRecord, error) {
	return s.readWebhook(ns, id)
}

func (s *Service) readWebhook(ns, id string) (*engine.WebhookRecord, error) {
	if err := CheckNamespace(ns); err != nil {
		return nil, err
	}
	w, ok := engine.ReadWebhook(s.node.DB(), ns, id)
	if !ok || id == "" {
		return nil, apierr.New(apierr.NotFound, "webhook %s not found", id)
	}
	return w, nil
}

func (s *Service) newWebhookSecret() (engine.SigningKey, error) {
	id := s.NewID("whs_")
	k, err := whsign.NewHMACKey(id)
	if err != nil {
		return engine.SigningKey{}, err
	}
	return engine.SigningKey{ID: id, Secret: k.Secret()}, nil
}

// toWebhook validates a request's settings, naming the field at fault.
func (s *Service) toWebhook(ctx context.Context, ns string, r *wire.WebhookRequest) (*engine.WebhookRecord, error) {
	if err := CheckNamespace(ns); err != nil {
		return nil, err
	}
	switch {
	case r.URL == "":
		return nil, apierr.Field("url", "url is required")
	case len(r.URL) > wire.MaxWebhookURLBytes:
		return nil, apierr.Field("url", "url is over %d bytes", wire.MaxWebhookURLBytes)
	case len(r.Description) > wire.MaxWebhookDescription || !utf8.ValidString(r.Description):
		return nil, apierr.Field("description", "description must be UTF-8 of at most %d bytes", wire.MaxWebhookDescription)
	}
	events, err := webhookEvents(r.Events)
	if err != nil {
		return nil, err
	}
	queues, err := webhookQueues(r.Queues)
	if err != nil {
		return nil, err
	}
	if err := s.checkOutboundURL(ctx, ns, "url", r.URL); err != nil {
		return nil, err
	}
	w := &engine.WebhookRecord{URL: r.URL, Events: events, Queues: queues, Enabled: r.Enabled == nil || *r.Enabled,
		Description: r.Description}
	return w, nil
}

func webhookEvents(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, apierr.Field("events", "events must name at least one event type (or \"*\")")
	}
	if len(in) > len(wire.WebhookEvents) {
		return nil, apierr.Field("events", "events has %d entries; there are %d event types", len(in), len(wire.WebhookEvents))
	}
	seen := map[string]bool{}
	for i, e := range in {
		field := fmt.Sprintf("events[%d]", i)
		if seen[e] {
			return nil, apierr.Field(field, "%s: %q is named twice", field, e)
		}
		seen[e] = true
		if e != "*" && !knownWebhookEvent(e) {
			return nil, apierr.Field(field, "%s: %q is not an event type; known: * %s", field, e, strings.Join(wire.WebhookEvents, " "))
		}
	}
	return append([]string(nil), in...), nil
}

func knownWebhookEvent(e string) bool {
	for _, k := range wire.WebhookEvents {
		if k == e {
			return true
		}
	}
	return false
}

func webhookQueues(in []string) ([]string, error) {
	if len(in) > wire.MaxWebhookQueues {
		return nil, apierr.Field("queues", "queues has %d patterns; the limit is %d", len(in), wire.MaxWebhookQueues)
	}
	for i, p := range in {
		if p == "*" {
			continue
		}
		if err := tenancy.ValidateQueue(strings.TrimSuffix(p, "*")); err != nil || strings.Count(p, "*") > 1 {
			field := fmt.Sprintf("queues[%d]", i)
			return nil, apierr.Field(field, "%s: %q is not a queue name or a prefix ending in *", field, p)
		}
	}
	return append([]string(nil), in...), nil
}

// WebhookView is an endpoint as a read shows it (never its secrets).
func WebhookView(w *engine.WebhookRecord) *wire.Webhook {
	v := &wire.Webhook{ID: w.ID, URL: w.URL, Events: w.Events, Queues: w.Queues, Enabled: w.Enabled,
		Description: w.Description, SecretIDs: []string{},
		CreatedAt: time.Unix(0, w.CreatedAt).UTC(), UpdatedAt: time.Unix(0, w.UpdatedAt).UTC()}
	if v.Queues == nil {
		v.Queues = []string{}
	}
	for _, k := range w.Secrets {
		v.SecretIDs = append(v.SecretIDs, k.ID)
	}
	if w.DisabledAt != 0 {
		v.Disabled = &wire.WebhookDisabled{Reason: w.DisabledReason, At: time.Unix(0, w.DisabledAt).UTC()}
	}
	if w.FailingSince != 0 {
		t := time.Unix(0, w.FailingSince).UTC()
		v.FailingSince = &t
	}
	return v
}

// WebhookWants reports whether w subscribes to events named name
// ("job.completed") of queue; an event of no queue (webhook.disabled)
// passes the queue patterns.
func WebhookWants(w *engine.WebhookRecord, name, queue string) bool {
	typeOK := false
	for _, e := range w.Events {
		if e == "*" || e == name {
			typeOK = true
			break
		}
	}
	if !typeOK {
		return false
	}
	if len(w.Queues) == 0 || queue == "" {
		return true
	}
	for _, p := range w.Queues {
		if tenancy.MatchPattern(p, queue) {
			return true
		}
	}
	return false
}

// WebhookDeliveries answers GET /api/v1/webhooks/{id}/deliveries from
// this node's applied state: the endpoint's delivery log, newest first.
func (s *Service) WebhookDeliveries(ns, id string) (*wire.WebhookDeliveryList, error) {
	if _, err := s.readWebhook(ns, id); err != nil {
		return nil, err
	}
	out := &wire.WebhookDeliveryList{Deliveries: []wire.WebhookDelivery{}}
	for _, a := range engine.ReadDeliveryLog(s.node.DB(), ns, id) {
		out.Deliveries = append(out.Deliveries, DeliveryView(&a))
	}
	return out, nil
}

// DeliveryView is a delivery log record as the API shows it.
func DeliveryView(a *engine.WebhookAttempt) wire.WebhookDelivery {
	return wire.WebhookDelivery{EventID: a.EventID, Type: a.Type, At: time.Unix(0, a.At).UTC(), Status: a.Status,
		LatencyMs: float64(a.LatencyUs) / 1000, Error: a.Error, Attempt: a.Attempt, OK: a.OK}
}

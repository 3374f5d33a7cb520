package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jobbie/jobbie/internal/outbound"
	"github.com/jobbie/jobbie/internal/whsign"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/wire"
)

// contentType is the CloudEvents structured mode's.
const contentType = "application/cloudevents+json; charset=utf-8"

// cloudEvent is ev's envelope: its id is the event's as the event stream
// names it ("<shard id>:<seq>"), stable across retries.
func (d *Deliverer) cloudEvent(ns string, ev *engine.Event) *wire.CloudEvent {
	var data any
	subject := ev.JobID
	if ev.IsJob() {
		jd := wire.WebhookJobData{JobID: ev.JobID, Queue: ev.Queue, State: ev.State.String(), Attempt: ev.Attempt, WorkerID: ev.WorkerID,
			DeadReason: ev.DeadReason()}
		if ev.From != 0 {
			jd.From = ev.From.String()
		}
		data = jd
	} else if a, ok := alertData(ev); ok {
		data, subject = a, ev.Subject
	} else {
		data, subject = thingData(ev), ev.Subject
	}
	b, _ := json.Marshal(data)
	return &wire.CloudEvent{SpecVersion: "1.0", ID: d.cfg.ShardID + ":" + strconv.FormatUint(ev.Seq, 10), Source: sourceOf(ns),
		Type: wire.WebhookTypePrefix + ev.Name(), Time: timeOf(ev.At), Subject: subject,
		DataContentType: "application/json", Data: b}
}

// thingData is the data of an event of another thing than a job (see
// wire.WebhookThingData for what each type carries).
func thingData(ev *engine.Event) wire.WebhookThingData {
	d := wire.WebhookThingData{Queue: ev.Queue, JobID: ev.JobID}
	switch ev.Type {
	case engine.EvBatchCompleted:
		d.BatchID, d.Status = ev.Subject, ev.Detail
		if c := ev.Counts; len(c) >= 4 {
			d.Counts = &wire.WebhookBatchCounts{Jobs: c[0], Succeeded: c[1], Failed: c[2], Cancelled: c[3]}
		}
	case engine.EvChainCompleted:
		d.ChainID, d.Status = ev.Subject, ev.Detail
	case engine.EvScheduleFired:
		d.ScheduleID, d.Name = ev.Subject, ev.Detail
	case engine.EvQueuePushDisabled:
		d.Reason = ev.Detail
	case engine.EvWebhookDisabled:
		d.WebhookID, d.Reason = ev.Subject, ev.Detail
	case engine.EvBudgetExceeded:
		d.Name, d.Reason = ev.Subject, ev.Detail // the budget, its scope
	}
	return d
}

// alertData is the data of alert.firing and alert.resolved.
func alertData(ev *engine.Event) (wire.WebhookAlertData, bool) {
	value, limit, since, ok := engine.AlertEventData(ev)
	if !ok {
		return wire.WebhookAlertData{}, false
	}
	return wire.WebhookAlertData{Rule: ev.Subject, Kind: ev.Detail, Queue: ev.Queue, Value: value, Threshold: limit,
		Since: timeOf(since)}, true
}

func sourceOf(ns string) string { return "/namespaces/" + ns }

// send makes one attempt to deliver ce to w, signed with the namespace's
// keys (v1a) and w's secrets (v1); the caller logs it. A host off the
// namespace's egress allow-list is a failed attempt whose error says so.
func (d *Deliverer) send(ctx context.Context, ns string, w *engine.WebhookRecord, ce *wire.CloudEvent, attempt int) wire.WebhookDelivery {
	start := d.cfg.Clock.Now()
	a := wire.WebhookDelivery{EventID: ce.ID, Type: ce.Type, At: start.UTC(), Attempt: attempt}
	body, err := json.Marshal(ce)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	set, err := d.keys(ctx, ns, w)
	if err != nil {
		a.Error = "signing keys: " + err.Error()
		return a
	}
	hdr, err := set.Headers(ce.ID, start, body)
	if err != nil {
		a.Error = "signing: " + err.Error()
		return a
	}
	hdr.Set("Content-Type", contentType)
	res, err := d.cfg.Client.Do(ctx, outbound.Request{Tenant: tenantOf(ns), URL: w.URL, Header: hdr, Body: body, Timeout: d.cfg.Timeout,
		AllowHosts: d.egressAllow(ns)})
	a.LatencyMs = float64(d.cfg.Clock.Since(start).Microseconds()) / 1000
	if res != nil {
		a.Status = res.Status
		a.LatencyMs = float64(res.Latency.Microseconds()) / 1000
	}
	if err != nil {
		var oe *outbound.Error
		if errors.As(err, &oe) {
			a.Error = oe.Error()
		} else {
			a.Error = err.Error()
		}
		if len(a.Error) > wire.MaxErrorBytes {
			a.Error = a.Error[:wire.MaxErrorBytes]
		}
		return a
	}
	a.OK = true
	return a
}

// egressFor is how long a read of a namespace's egress allow-list is
// used: a change applies to deliveries from a second later.
const egressFor = time.Second

type egressRead struct {
	allow []string
	at    time.Time
}

// egressAllow is ns's egress allow-list, read again once egressFor
// passed. Entries are few (a namespace's, while it has endpoints) and
// dropped with the deliverer.
func (d *Deliverer) egressAllow(ns string) []string {
	now := d.cfg.Clock.Now()
	d.mu.Lock()
	e, ok := d.egress[ns]
	d.mu.Unlock()
	if ok && now.Sub(e.at) < egressFor {
		return e.allow
	}
	e = egressRead{allow: d.svc.EgressAllow(ns), at: now}
	d.mu.Lock()
	d.egress[ns] = e
	d.mu.Unlock()
	return e.allow
}

// keys is the namespace's key set with w's secrets beside it.
func (d *Deliverer) keys(ctx context.Context, ns string, w *engine.WebhookRecord) (whsign.KeySet, error) {
	set, err := d.svc.SigningKeySet(ctx, ns)
	if err != nil {
		return nil, err
	}
	own, err := (&engine.SigningKeySet{Keys: w.Secrets}).KeySet()
	if err != nil {
		return nil, err
	}
	return append(set, own...), nil
}

// tenantOf is the tenant of a shard namespace ("<tenant>/<name>"): the
// outbound bound is per tenant.
func tenantOf(ns string) string {
	t, _, _ := strings.Cut(ns, "/")
	return t
}

func timeOf(ns int64) time.Time { return time.Unix(0, ns).UTC() }

package service

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/textproto"
	"sort"
	"strings"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/outbound"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/wire"
)

// reservedPushHeaders are set by the dispatcher (the signature, the body)
// or by HTTP itself; a queue may not send its own.
var reservedPushHeaders = map[string]bool{
	"Content-Type": true, "Content-Length": true, "Host": true, "User-Agent": true,
	"Connection": true, "Transfer-Encoding": true, "Te": true, "Trailer": true, "Upgrade": true,
	"Keep-Alive": true, "Proxy-Authorization": true, "Proxy-Connection": true, "Expect": true,
}

// toPushConfig validates a queue's push settings, naming the field at
// fault ("push.url", "push.headers"). The URL passes outbound's rules,
// and, unless the node allows private targets, its name must resolve now
// to public addresses only (the dispatcher checks again at every dial).
func (s *Service) toPushConfig(ctx context.Context, ns string, r *wire.QueuePushRequest) (*engine.PushConfig, error) {
	p := &engine.PushConfig{URL: r.URL, TimeoutNs: int64(wire.DefaultPushTimeout), MaxInFlight: wire.DefaultPushMaxInFlight}
	if err := s.checkOutboundURL(ctx, ns, "push.url", r.URL); err != nil {
		return nil, err
	}
	switch r.Mode {
	case "", wire.PushAlways:
	case wire.PushWhenNoWorkers:
		p.WhenNoWork = true
	default:
		return nil, apierr.Field("push.mode", "push.mode must be %q or %q", wire.PushAlways, wire.PushWhenNoWorkers)
	}
	d, ok, err := parseSpan("push.timeout", r.Timeout, wire.MinPushTimeout, wire.MaxPushTimeout)
	if err != nil {
		return nil, err
	}
	if ok {
		p.TimeoutNs = int64(d)
	}
	if raw := r.MaxInFlight; len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &p.MaxInFlight); err != nil || p.MaxInFlight < 1 || p.MaxInFlight > wire.MaxPushMaxInFlight {
			return nil, apierr.Field("push.max_in_flight", "push.max_in_flight must be an integer between 1 and %d (deliveries at once)", wire.MaxPushMaxInFlight)
		}
	}
	p.Headers, err = pushHeaders(r.Headers)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// checkOutboundURL is outbound's configuration-time check of a push or
// webhook URL of namespace ns, against its egress allow-list too; its
// refusal a 400 naming field.
func (s *Service) checkOutboundURL(ctx context.Context, ns, field, raw string) error {
	return s.checkOutboundURLIn(ctx, s.EgressAllow(ns), field, raw)
}

// checkOutboundURLIn is checkOutboundURL against the allow-list allow.
func (s *Service) checkOutboundURLIn(ctx context.Context, allow []string, field, raw string) error {
	if s.cfg.Outbound == nil {
		return apierr.Field(field, "outbound delivery is not enabled on this shard")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := s.cfg.Outbound.Check(ctx, raw, allow)
	if err == nil {
		return nil
	}
	var oe *outbound.Error
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err
	}
	return apierr.Field(field, "%s %s", field, strings.TrimPrefix(err.Error(), "outbound: "))
}

// EgressAllow is ns's egress allow-list as this node last applied it (nil:
// any public host). The push and webhook runners call it at most once a
// second per runner (a read of one small key).
func (s *Service) EgressAllow(ns string) []string {
	return engine.ReadNamespaceConfig(s.node.DB(), ns).EgressAllow
}

// pushHeaders checks a queue's extra headers and sorts them by name.
func pushHeaders(h map[string]string) ([]engine.PushHeader, error) {
	if len(h) > wire.MaxPushHeaders {
		return nil, apierr.Field("push.headers", "push.headers has %d headers; the limit is %d", len(h), wire.MaxPushHeaders)
	}
	out := make([]engine.PushHeader, 0, len(h))
	total := 0
	for name, value := range h {
		canon := textproto.CanonicalMIMEHeaderKey(name)
		switch {
		case !validHeaderName(name):
			return nil, apierr.Field("push.headers", "push.headers: %q is not a valid header name", name)
		case reservedPushHeaders[canon] || strings.HasPrefix(canon, "Webhook-"):
			return nil, apierr.Field("push.headers", "push.headers: %s is set by Jobbie and may not be sent", canon)
		case len(name)+len(value) > wire.MaxPushHeaderBytes:
			return nil, apierr.Field("push.headers", "push.headers: %s is over %d bytes", canon, wire.MaxPushHeaderBytes)
		case strings.ContainsAny(value, "\r\n\x00"):
			return nil, apierr.Field("push.headers", "push.headers: %s's value holds a line break or NUL", canon)
		}
		total += len(name) + len(value)
		out = append(out, engine.PushHeader{Name: canon, Value: value})
	}
	if total > wire.MaxPushHeadersBytes {
		return nil, apierr.Field("push.headers", "push.headers are %d bytes together; the limit is %d", total, wire.MaxPushHeadersBytes)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	for i := 1; i < len(out); i++ {
		if out[i].Name == out[i-1].Name {
			return nil, apierr.Field("push.headers", "push.headers names %s twice", out[i].Name)
		}
	}
	return out, nil
}

// validHeaderName: an HTTP token (RFC 9110).
func validHeaderName(n string) bool {
	if n == "" {
		return false
	}
	for _, c := range []byte(n) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return http.CanonicalHeaderKey(n) != ""
}

// pushView is a queue's push settings as a read shows them.
func pushView(p *engine.PushConfig) *wire.QueuePush {
	if p == nil {
		return nil
	}
	v := &wire.QueuePush{URL: p.URL, Mode: wire.PushAlways, Timeout: wire.FormatDuration(time.Duration(p.TimeoutNs)),
		MaxInFlight: p.MaxInFlight, Headers: map[string]string{}}
	if p.WhenNoWork {
		v.Mode = wire.PushWhenNoWorkers
	}
	for _, h := range p.Headers {
		v.Headers[h.Name] = h.Value
	}
	if p.DisabledAt != 0 {
		v.Disabled = &wire.PushDisabled{Reason: p.DisabledReason, At: time.Unix(0, p.DisabledAt).UTC()}
	}
	return v
}

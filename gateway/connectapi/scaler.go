package connectapi

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"

	"github.com/jobbie/jobbie/proto/gen/externalscaler"
	"github.com/jobbie/jobbie/proto/gen/externalscaler/externalscalerconnect"
	"github.com/jobbie/jobbie/wire"
)

// KEDA's external scaler (proto/externalscaler): KEDA names a queue in
// its trigger's metadata, and every call reads it with GET
// /api/v1/queues/{name}/scale, served by Route with the metadata's key
// and namespace: so the scaler is authorized, scoped, rate-limited and
// metered as that route is, and answers from the same reading. What it
// adds is only KEDA's vocabulary: the metadata, the metric's name and
// target, and when a queue is active.

// ScalerConfig is how the external scaler behaves.
type ScalerConfig struct {
	// Poll is how often a StreamIsActive stream reads its queue.
	Poll time.Duration
}

func (c ScalerConfig) withDefaults() ScalerConfig {
	if c.Poll <= 0 {
		c.Poll = 5 * time.Second
	}
	return c
}

// The trigger metadata's keys the scaler reads (docs/api/grpc.md).
const (
	metaQueue      = "queue"
	metaNamespace  = "namespace"
	metaTarget     = "targetDemandPerReplica"
	metaActivation = "activationDemand"
	metaKey        = "apiKey"
	// metaKeyFromEnv is KEDA's way to a secret: it sends, under this
	// same key, the value of the environment variable it names in the
	// scaled workload's container. KEDA passes an external scaler no
	// TriggerAuthentication parameter but its TLS ones.
	metaKeyFromEnv = "apiKeyFromEnv"
)

// kedaKeys are metadata keys KEDA reads itself, for its connection to
// the scaler, and passes along with the rest: not ours, not refused.
var kedaKeys = map[string]bool{"scalerAddress": true, "enableTLS": true, "unsafeSsl": true,
	"caCert": true, "tlsCertFile": true, "tlsClientCert": true, "tlsClientKey": true}

// scaleRef is a trigger's metadata, read.
type scaleRef struct {
	queue      string
	header     http.Header // the call's passed metadata, with the key and namespace of the trigger's
	target     float64     // demand per replica
	activation float64     // the demand above which the queue is active
}

// readScaleRef reads ref's metadata; h is the call's. A bad or unknown
// key is InvalidArgument naming it, before any request is made.
func readScaleRef(ref *externalscaler.ScaledObjectRef, h http.Header) (scaleRef, error) {
	md := ref.GetScalerMetadata()
	r := scaleRef{queue: md[metaQueue], header: h.Clone(), target: 1}
	for _, k := range slices.Sorted(maps.Keys(md)) { // the first unknown key, always the same
		switch k {
		case metaQueue, metaNamespace, metaTarget, metaActivation, metaKey, metaKeyFromEnv:
		default:
			if !kedaKeys[k] {
				return r, fieldError(k, "unknown metadata key %q: the scaler reads %s, %s, %s, %s and %s or %s",
					k, metaQueue, metaNamespace, metaTarget, metaActivation, metaKey, metaKeyFromEnv)
			}
		}
	}
	if r.queue == "" {
		return r, fieldError(metaQueue, "%s is required: the queue to scale on", metaQueue)
	}
	if err := segment(metaQueue, r.queue); err != nil {
		return r, err
	}
	var err error
	if v, ok := md[metaTarget]; ok {
		if r.target, err = strconv.ParseFloat(v, 64); err != nil || !(r.target > 0) || math.IsInf(r.target, 0) {
			return r, fieldError(metaTarget, "%s must be a number above 0 (the demand one replica takes), not %q", metaTarget, v)
		}
	}
	if v, ok := md[metaActivation]; ok {
		if r.activation, err = strconv.ParseFloat(v, 64); err != nil || !(r.activation >= 0) || math.IsInf(r.activation, 0) {
			return r, fieldError(metaActivation, "%s must be a number of at least 0, not %q", metaActivation, v)
		}
	}
	key, fromEnv := md[metaKey], md[metaKeyFromEnv]
	switch {
	case key != "" && fromEnv != "":
		return r, fieldError(metaKey, "give %s or %s, not both", metaKey, metaKeyFromEnv)
	case key == "":
		key = fromEnv
	}
	if key != "" {
		if r.header.Get("Authorization") != "" {
			return r, fieldError(metaKey, "the API key is given twice, in the metadata and the authorization header: give one")
		}
		r.header.Set("Authorization", "Bearer "+key)
	}
	if ns, ok := md[metaNamespace]; ok {
		if r.header.Get(wire.NamespaceHeader) != "" {
			return r, fieldError(metaNamespace, "the namespace is given twice, in the metadata and the %s header: give one", strings.ToLower(wire.NamespaceHeader))
		}
		if ns == "" {
			return r, fieldError(metaNamespace, "%s is empty: leave it out for the key's default namespace", metaNamespace)
		}
		r.header.Set(wire.NamespaceHeader, ns)
	}
	return r, nil
}

// active is whether v is an active queue for r: demand above the
// activation threshold, and always while a job is in flight, so KEDA
// never scales to zero the workers that hold one.
func (r scaleRef) active(v *wire.QueueScale) bool {
	return v.InFlight > 0 || float64(v.Demand) > r.activation
}

// metricName is the queue's metric for KEDA (which puts "s<trigger>-"
// before it): its name made a Kubernetes metric name, whose path
// segments take no '.' or ':'.
func (r scaleRef) metricName() string {
	return "jobbie-" + strings.NewReplacer(".", "-", ":", "-").Replace(r.queue)
}

// scale reads the queue: GET /api/v1/queues/{name}/scale.
func (s *Services) scale(ctx context.Context, r scaleRef) (*wire.QueueScale, http.Header, error) {
	b, h, err := s.call(ctx, r.header, http.MethodGet, "/api/v1/queues/"+r.queue+"/scale", nil)
	if err != nil {
		return nil, h, err
	}
	v := new(wire.QueueScale)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, h, connect.NewError(connect.CodeInternal, err)
	}
	return v, h, nil
}

var _ externalscalerconnect.ExternalScalerHandler = (*Services)(nil)

func (s *Services) IsActive(ctx context.Context, req *connect.Request[externalscaler.ScaledObjectRef]) (*connect.Response[externalscaler.IsActiveResponse], error) {
	r, err := readScaleRef(req.Msg, req.Header())
	if err != nil {
		return nil, err
	}
	v, h, err := s.scale(ctx, r)
	if err != nil {
		return respond[externalscaler.IsActiveResponse](nil, h, err)
	}
	return respond(&externalscaler.IsActiveResponse{Result: r.active(v)}, h, nil)
}

// GetMetricSpec reads the queue too, though its answer needs nothing of
// it, so that a trigger KEDA may not read is refused when KEDA sets it
// up rather than at its first poll.
func (s *Services) GetMetricSpec(ctx context.Context, req *connect.Request[externalscaler.ScaledObjectRef]) (*connect.Response[externalscaler.GetMetricSpecResponse], error) {
	r, err := readScaleRef(req.Msg, req.Header())
	if err != nil {
		return nil, err
	}
	if _, h, err := s.scale(ctx, r); err != nil {
		return respond[externalscaler.GetMetricSpecResponse](nil, h, err)
	}
	spec := &externalscaler.MetricSpec{MetricName: r.metricName(), TargetSizeFloat: r.target,
		TargetSize: max(1, int64(math.Round(r.target)))} // for a KEDA older than targetSizeFloat
	return connect.NewResponse(&externalscaler.GetMetricSpecResponse{MetricSpecs: []*externalscaler.MetricSpec{spec}}), nil
}

func (s *Services) GetMetrics(ctx context.Context, req *connect.Request[externalscaler.GetMetricsRequest]) (*connect.Response[externalscaler.GetMetricsResponse], error) {
	if req.Msg.GetScaledObjectRef() == nil {
		return nil, fieldError("scaledObjectRef", "scaledObjectRef is required")
	}
	r, err := readScaleRef(req.Msg.GetScaledObjectRef(), req.Header())
	if err != nil {
		return nil, err
	}
	name := r.metricName()
	if m := req.Msg.GetMetricName(); m != "" && m != name {
		return nil, fieldError("metricName", "metricName %q is not this trigger's metric, %q", m, name)
	}
	v, h, err := s.scale(ctx, r)
	if err != nil {
		return respond[externalscaler.GetMetricsResponse](nil, h, err)
	}
	mv := &externalscaler.MetricValue{MetricName: name, MetricValue: v.Demand, MetricValueFloat: float64(v.Demand)}
	return respond(&externalscaler.GetMetricsResponse{MetricValues: []*externalscaler.MetricValue{mv}}, h, nil)
}

// StreamIsActive reads the queue every Poll and sends whether it is
// active when the stream opens and each time that changes. A refusal (a
// bad key, another tenant's queue) ends the stream with its code; a busy
// or leaderless shard (Unavailable, ResourceExhausted) is read again at
// the next poll. The stream ends when its caller closes it, or with
// Unavailable when the gateway stops, for KEDA to open it again
// elsewhere.
func (s *Services) StreamIsActive(ctx context.Context, req *connect.Request[externalscaler.ScaledObjectRef], out *connect.ServerStream[externalscaler.IsActiveResponse]) error {
	r, err := readScaleRef(req.Msg, req.Header())
	if err != nil {
		return err
	}
	tick := time.NewTicker(s.scaler.Poll)
	defer tick.Stop()
	sent, last := false, false
	for {
		v, h, err := s.scale(ctx, r)
		switch {
		case err == nil:
			if a := r.active(v); !sent || a != last {
				if err := out.Send(&externalscaler.IsActiveResponse{Result: a}); err != nil {
					return err
				}
				sent, last = true, a
			}
		case !retried(err):
			_, err = respond[externalscaler.IsActiveResponse](nil, h, err)
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.work.Stopping.Done():
			return connect.NewError(connect.CodeUnavailable, errors.New("the gateway is stopping: open the stream again"))
		case <-tick.C:
		}
	}
}

// retried: an error a stream's next poll may not meet (a busy shard, no
// leader yet).
func retried(err error) bool {
	c := connect.CodeOf(err)
	return c == connect.CodeUnavailable || c == connect.CodeResourceExhausted
}

package service

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/outbound"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// purgeStepsPerReq guards a namespace delete against a loop: each step
// removes up to a thousand jobs or ten thousand keys.
const purgeStepsPerReq = 1_000_000

// NamespaceUsage counts what ns holds on this shard, from local state:
// its jobs in every state (the sum of its queues' counts), its queues and
// its schedules.
func (s *Service) NamespaceUsage(ns string) (*wire.NamespaceUsage, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	db := s.node.DB()
	out := &wire.NamespaceUsage{}
	p := keys.QueuePrefix(ns)
	err := eachKey(db, p, func(k []byte) {
		if q, ok := s.eng.Queue(db, ns, string(k[len(p):])); ok {
			out.Queues++
			for _, n := range q.Counts {
				out.Jobs += n
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if err := eachKey(db, keys.SchedulePrefix(ns), func([]byte) { out.Schedules++ }); err != nil {
		return nil, err
	}
	cfg := engine.ReadNamespaceConfig(db, ns)
	out.Retention, out.EgressAllow, out.OTLPEndpoint = durJSON(cfg.Retention), cfg.EgressAllow, cfg.OTLPEndpoint
	return out, nil
}

// ConfigureNamespace changes ns's settings on this shard (PUT
// /api/v1/namespace), those sent; one left out stays as it is. Retention
// is what its completed and cancelled jobs take when their queue's
// defaults set none, from those finishing after it on; null is none (the
// node's applies again). The egress allow-list holds its push queues and
// webhooks to the hosts it names, from their next delivery on. The OTLP
// endpoint receives the spans of its jobs (namespaceOTLP).
func (s *Service) ConfigureNamespace(ctx context.Context, ns string, req *wire.NamespaceSettings) (*wire.NamespaceUsage, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if req.Retention == nil && req.EgressAllow == nil && req.OTLPEndpoint == nil {
		return nil, apierr.Field("retention", "retention, egress_allow or otlp_endpoint is required: a retention like \"168h\", or null for none")
	}
	c := &engine.NamespaceConfigCmd{NS: ns, KeepRetention: req.Retention == nil, KeepEgress: req.EgressAllow == nil, KeepOTLP: req.OTLPEndpoint == nil}
	if req.Retention != nil {
		d, _, err := wire.ParseDuration(req.Retention)
		switch {
		case err != nil:
			return nil, apierr.Field("retention", "retention must be a duration like \"168h\" or a number of seconds (null for none)")
		case d != 0 && (d < wire.MinRetention || d > wire.MaxRetention):
			return nil, apierr.Field("retention", "retention must be between %s and %s (null for none)",
				wire.FormatDuration(wire.MinRetention), wire.FormatDuration(wire.MaxRetention))
		}
		c.Config.Retention = int64(d)
	}
	if req.EgressAllow != nil {
		allow, err := outbound.ParseAllowList(req.EgressAllow)
		if err != nil {
			return nil, err
		}
		c.Config.EgressAllow = allow
	}
	if req.OTLPEndpoint != nil {
		if err := s.namespaceOTLP(ctx, ns, c, req.OTLPEndpoint); err != nil {
			return nil, err
		}
	}
	// A change of retention alone keeps no list where there is none, so
	// it stays under the number every node knows (a list set between this
	// read and the apply is then replaced, as by any whole PUT before).
	old := engine.ReadNamespaceConfig(s.node.DB(), ns)
	if c.KeepEgress && len(old.EgressAllow) == 0 {
		c.KeepEgress = false
	}
	if c.KeepOTLP && old.OTLPEndpoint == "" {
		c.KeepOTLP = false
	}
	if _, err := engine.NamespaceConfigureFor(c).Propose(ctx, s.node, c); err != nil {
		return nil, err
	}
	return s.NamespaceUsage(ns)
}

// eachKey calls f with every key under prefix p.
func eachKey(r pebble.Reader, p []byte, f func(k []byte)) error {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		f(it.Key())
	}
	return it.Close()
}

// DeleteNamespace removes everything ns holds on this shard: its jobs in
// every state with their attempts, indexes and counts, its queues'
// settings, schedules, batches, chains, unique locks and bulk operations.
// It proposes engine.NamespacePurge steps, each a Raft entry of bounded
// size, until one finds the namespace empty. A request that ends early
// leaves part of it; the same call again finishes it.
func (s *Service) DeleteNamespace(ctx context.Context, ns string) error {
	if err := namespaceOK(ns); err != nil {
		return err
	}
	c := &engine.NamespacePurgeCmd{NS: ns}
	for range purgeStepsPerReq {
		st, err := engine.NamespacePurge.Propose(ctx, s.node, c)
		if err != nil {
			return err
		}
		if st.Done {
			return nil
		}
		c.Phase, c.After = st.Phase, st.Next
	}
	return fmt.Errorf("shard: namespace %s still holds data after %d purge steps", ns, purgeStepsPerReq)
}

// namespaceOTLP sets c's OTLP endpoint from raw (a JSON string, or null or
// "" for none), checked as a push URL is: https, a public address (unless
// the operator allows private ones) and on the egress allow-list the
// command leaves in place.
func (s *Service) namespaceOTLP(ctx context.Context, ns string, c *engine.NamespaceConfigCmd, raw json.RawMessage) error {
	var u *string
	if err := json.Unmarshal(raw, &u); err != nil {
		return apierr.Field("otlp_endpoint", "otlp_endpoint must be an https URL, or null for none")
	}
	if u == nil || *u == "" {
		return nil
	}
	allow := c.Config.EgressAllow
	if c.KeepEgress {
		allow = s.EgressAllow(ns)
	}
	if err := s.checkOutboundURLIn(ctx, allow, "otlp_endpoint", *u); err != nil {
		return err
	}
	c.Config.OTLPEndpoint = *u
	return nil
}

// NamespaceOTLP is ns's OTLP endpoint and egress allow-list as this node
// last applied them, for its spans' exporter (read at most once a second
// per namespace).
func (s *Service) NamespaceOTLP(ns string) (endpoint string, allow []string) {
	cfg := engine.ReadNamespaceConfig(s.node.DB(), ns)
	return cfg.OTLPEndpoint, cfg.EgressAllow
}

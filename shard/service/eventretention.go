package service

import (
	"context"
	"sync"

	"github.com/jobbie/jobbie/shard/engine"
)

// Event log retention from the plan: the gateway's requests say what a
// namespace's plan keeps (wire.EventRetentionHeader, read by the API);
// the node remembers the last said per namespace, in memory, and the
// leader's trim records it in the replicated state when it differs from
// what is recorded (EventRetention), then trims by the record. A plan
// change so reaches the log within one trim period of the namespace's
// next request; a later leader trims by the record whatever it heard.

// maxRetentionWants bounds the namespaces remembered. A full table starts
// over: a namespace forgotten keeps its record until its next request.
const maxRetentionWants = 16384

type retentionWant struct{ hours, events int64 }

// retentionWants is the namespace → retention its plan last said table.
type retentionWants struct {
	mu sync.RWMutex
	m  map[string]retentionWant
}

// WantEventRetention records what ns's plan keeps of its event log, as a
// request said; out of the plans' bounds is a 400 naming the field.
func (s *Service) WantEventRetention(ns string, hours, events int64) error {
	w, v := &s.retention, retentionWant{hours, events}
	w.mu.RLock()
	cur, ok := w.m[ns]
	w.mu.RUnlock()
	if ok && cur == v {
		return nil
	}
	if err := engine.ValidEventRetention(hours, events); err != nil {
		return err
	}
	w.mu.Lock()
	if w.m == nil || (!ok && len(w.m) >= maxRetentionWants) {
		w.m = map[string]retentionWant{}
	}
	w.m[ns] = v
	w.mu.Unlock()
	return nil
}

func (s *Service) wantedRetention(ns string) (retentionWant, bool) {
	s.retention.mu.RLock()
	defer s.retention.mu.RUnlock()
	v, ok := s.retention.m[ns]
	return v, ok
}

// EventRetention is ns's event log retention on the leader: its record,
// brought in line first with what its plan last said here; def when its
// plan never said. An error is a failed proposal (the record stands).
func (s *Service) EventRetention(ctx context.Context, ns string, def engine.EventRetention) (engine.EventRetention, error) {
	hours, events, ok := engine.ReadEventRetention(s.node.DB(), ns)
	if want, known := s.wantedRetention(ns); known && (!ok || want != (retentionWant{hours, events})) {
		set, err := engine.EventRetentionSet.Propose(ctx, s.node, &engine.EventRetentionCmd{NS: ns, Hours: want.hours, Events: want.events})
		if err != nil {
			return retentionOr(hours, events, ok, def), err
		}
		if set {
			hours, events, ok = want.hours, want.events, true
		}
	}
	return retentionOr(hours, events, ok, def), nil
}

func retentionOr(hours, events int64, ok bool, def engine.EventRetention) engine.EventRetention {
	if !ok {
		return def
	}
	return engine.EventRetentionOf(hours, events)
}

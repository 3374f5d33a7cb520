package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/schema"
	"github.com/jobbie/jobbie/wire"
)

// Typed payloads: the leader checks every payload a request would store
// against its queue's schema before it proposes (shard/schema; the engine
// never validates). The command names the version of each queue it
// consulted (engine.SchemaCheck); a schema changed between the check and
// the apply refuses the command, and the request is checked again
// against the new version (schemaTries), so a payload is never stored
// unchecked against the schema in force when it is written.

// schemaTries is how often a request is checked again when its queue's
// schema changed under it, before it answers 409 schema_changed.
const schemaTries = 3

// schemaChecks collects what one request checked: each queue once.
type schemaChecks struct {
	s    *Service
	ns   string
	seen map[string]schemaSeen
	list []engine.SchemaCheck
}

type schemaSeen struct {
	version uint32
	schema  *schema.Schema
}

func (s *Service) schemaChecks(ns string) *schemaChecks {
	return &schemaChecks{s: s, ns: ns}
}

// check validates payload (field names it in a refusal, with the JSON
// pointer inside it) against queue's schema in force, and returns the
// version it was checked against (0: the queue has none).
func (c *schemaChecks) check(queue, field string, payload []byte) (uint32, error) {
	seen, ok := c.seen[queue]
	if !ok {
		var err error
		if seen, err = c.s.schemaOf(c.ns, queue); err != nil {
			return 0, err
		}
		if c.seen == nil {
			c.seen = make(map[string]schemaSeen, 1)
		}
		c.seen[queue] = seen
		c.list = append(c.list, engine.SchemaCheck{Queue: queue, Version: seen.version})
	}
	if seen.schema == nil {
		return 0, nil
	}
	return seen.version, seen.schema.Check(field, payload)
}

// schemaOf is queue's schema in force on this node and its version.
func (s *Service) schemaOf(ns, queue string) (schemaSeen, error) {
	db := s.node.DB()
	v := s.eng.SchemaVersion(db, ns, queue)
	if v == 0 {
		return schemaSeen{}, nil
	}
	sch, v, err := s.schemas.Get(ns, queue, v, func() ([]byte, uint32, error) {
		return engine.QueueSchema(db, ns, queue)
	})
	return schemaSeen{version: v, schema: sch}, err
}

// withSchemaRetry runs a check-and-propose until its queues' schemas hold
// still between the two, at most schemaTries times.
func withSchemaRetry[T any](ctx context.Context, f func() (T, error)) (T, error) {
	for try := 1; ; try++ {
		out, err := f()
		if err == nil || !engine.IsSchemaChanged(err) || try == schemaTries || ctx.Err() != nil {
			return out, err
		}
	}
}

// checkJobSchemas checks an enqueue's payload and its chain's step and
// handler payloads (the part of a step's payload its producer wrote:
// the envelope Jobbie adds when the step runs is not checked) against
// their queues' schemas, and records the versions on j.
func checkJobSchemas(c *schemaChecks, prefix string, r *wire.EnqueueRequest, j *job.Job) error {
	v, err := c.check(j.Queue, prefix+"payload", j.Payload)
	if err != nil {
		return err
	}
	var steps []uint32
	if ch := r.Chain; ch != nil {
		steps = make([]uint32, len(ch.Steps)+2)
		steps[0] = v
		for i := 1; i < len(ch.Steps); i++ {
			if steps[i], err = c.check(ch.Steps[i].Queue, fmt.Sprintf("%schain.steps[%d].payload", prefix, i), ch.Steps[i].Payload); err != nil {
				return err
			}
		}
		for i, h := range []struct {
			step  *wire.StepSpec
			field string
		}{{ch.OnFailure, "on_failure"}, {ch.OnExit, "on_exit"}} {
			if h.step == nil {
				continue
			}
			if steps[len(ch.Steps)+i], err = c.check(h.step.Queue, prefix+"chain."+h.field+".payload", h.step.Payload); err != nil {
				return err
			}
		}
		if !slices.ContainsFunc(steps, func(v uint32) bool { return v != 0 }) {
			steps = nil
		}
	}
	if v != 0 || steps != nil {
		j.Schema = &job.Schema{Version: v, Steps: steps}
	}
	return nil
}

// isSchemaRefusal reports whether err is a payload refused by a schema.
func isSchemaRefusal(err error) bool {
	var ae *apierr.Error
	return errors.As(err, &ae) && ae.Code == apierr.BadRequest && strings.Contains(ae.Message, schema.Refusal)
}

// replayInstead answers a request under an Idempotency-Key whose first
// was stored, though its payload fails the schema in force now (the
// schema changed since): the key's first answer, as every repeat gets.
// The command it proposes applies only as that replay (it names a
// version never in force), so if the record is gone by then nothing is
// stored and the refusal stands.
func (s *Service) replayInstead(ctx context.Context, ns string) ([]engine.EnqueueResult, string, bool) {
	if !s.replays(ctx, ns) {
		return nil, "", false
	}
	c := &engine.EnqueueCmd{NS: ns, Checked: []engine.SchemaCheck{{Version: engine.NeverInForce}}}
	res, echo, err := propose(ctx, s, ns, engine.EnqueueSchema, c, nil)
	if err != nil {
		return nil, "", false
	}
	return res, string(echo), true
}

// replays reports whether ctx's Idempotency-Key has a first request of
// the same hash on record, so the request would be answered by it.
func (s *Service) replays(ctx context.Context, ns string) bool {
	idem := idempotencyOf(ctx)
	return idem != nil && engine.IdemReplays(s.node.DB(), ns, idem.Key, idem.Hash, s.now())
}

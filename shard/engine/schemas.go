package engine

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
)

// Typed payloads. A queue's schema is stored whole under keys.QueueSchema
// (canonical JSON, as the proposer checked it); the queue record holds the
// version in force (QueueRecord.Schema, 0 = none) and the last version
// given (SchemaSeq), so a schema removed and set again takes a new number.
// The engine never compiles or validates a schema: the proposer checks
// payloads against the version in force on the leader and names, in the
// command, the version of every queue it consulted (SchemaCheck); the
// apply refuses the command when one of them has changed since, which is
// a read of replicated state, so every replica decides alike.

// Typed payloads' commands: a queue configuration that carries a schema
// or keeps the one in force (QueueConfigCmd.Schema, KeepSchema), an enqueue that names the schema versions it
// was checked against (EnqueueCmd.Checked), and a schedule's fire checked
// against its queue's schema or refused by it (FireCmd.Checked). An older
// node would drop the fields, so they have numbers of their own.
var (
	QueueConfigureSchema = replica.Op[QueueConfigCmd, replica.None]{Type: 104, Name: "queue configure.schema"}
	EnqueueSchema        = replica.Op[EnqueueCmd, []EnqueueResult]{Type: 105, Name: "enqueue.schema"}
	ScheduleFireSchema   = replica.Op[FireCmd, bool]{Type: 106, Name: "schedule.fire.schema"}
)

func (e *Engine) registerSchemas(r *replica.Registry) {
	QueueConfigureSchema.Handle(r, gated(e, e.applyQueueConfigure))
	EnqueueSchema.Handle(r, gated(e, e.applyEnqueue))
	ScheduleFireSchema.Handle(r, loopGated(e, e.applyScheduleFire))
}

// SchemaCheck is a queue an enqueue's proposer consulted, and the version
// of its schema it checked the queue's payloads against (0: it had none).
type SchemaCheck struct {
	Queue   string `codec:"q"`
	Version uint32 `codec:"v"`
}

// ErrSchemaChanged refuses a command whose proposer checked a payload
// against a version of its queue's schema that is no longer in force.
// The proposer checks again and proposes anew.
var ErrSchemaChanged = apierr.New(apierr.SchemaChanged, "the queue's schema changed while the request was checked; nothing was stored: send it again")

// IsSchemaChanged reports whether err is ErrSchemaChanged's refusal.
func IsSchemaChanged(err error) bool {
	var ae *apierr.Error
	return errors.As(err, &ae) && ae.Code == apierr.SchemaChanged
}

// checkSchemas refuses (before anything is written) when a queue the
// proposer consulted has another schema version in force now.
func (e *Engine) checkSchemas(tx *replica.Tx, ns string, checked []SchemaCheck) error {
	for _, c := range checked {
		if c.Version == NeverInForce || e.queues.get(tx, ns, c.Queue).Schema != c.Version {
			return ErrSchemaChanged
		}
	}
	return nil
}

// QueueSchema reads the schema in force of a queue and its version (nil,
// 0: none), from one read, so the two always agree. The stored value is
// the version (4 bytes, big-endian), then the canonical JSON.
func QueueSchema(r pebble.Reader, ns, queue string) ([]byte, uint32, error) {
	v, closer, err := r.Get(keys.QueueSchema(ns, queue))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer closer.Close()
	if len(v) < 4 {
		return nil, 0, errors.New("engine: short queue schema record")
	}
	return append([]byte(nil), v[4:]...), binary.BigEndian.Uint32(v), nil
}

// SchemaVersion is the version of queue's schema in force as last
// applied (0: none), safe from any goroutine: a proposer's cheap look
// before it checks a payload.
func (e *Engine) SchemaVersion(r pebble.Reader, ns, queue string) uint32 {
	c := e.queues
	c.mu.RLock()
	q, ok := c.recs[headKey(ns, queue)]
	var v uint32
	if ok {
		v = q.Schema
	}
	c.mu.RUnlock()
	if ok {
		return v
	}
	q, _ = ReadQueue(r, ns, queue)
	return q.Schema
}

// setSchema makes schema (canonical JSON; nil: none) the queue's: a new
// version when it differs from the one in force, nothing when it is the
// same. Stored jobs keep the versions they were checked against.
func (e *Engine) setSchema(tx *replica.Tx, ns, queue string, schema []byte) {
	q := e.queues.get(tx, ns, queue)
	if q.Schema == 0 && len(schema) == 0 {
		return
	}
	if q.Schema != 0 {
		old, _, err := QueueSchema(tx, ns, queue)
		must(err)
		if bytes.Equal(old, schema) {
			return
		}
	}
	if len(schema) == 0 {
		must(tx.Delete(keys.QueueSchema(ns, queue), nil))
		e.queues.update(tx, ns, queue, func(q *QueueRecord) { q.Schema = 0 })
		return
	}
	e.queues.update(tx, ns, queue, func(q *QueueRecord) {
		q.SchemaSeq++
		q.Schema = q.SchemaSeq
	})
	v := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(schema)), q.Schema)
	must(tx.Set(keys.QueueSchema(ns, queue), append(v, schema...), nil))
}

// dropSchema deletes a deleted queue's schema.
func (e *Engine) dropSchema(tx *replica.Tx, ns string, q *QueueRecord) {
	if q.Schema != 0 {
		must(tx.Delete(keys.QueueSchema(ns, q.Name), nil))
	}
}

// stepSchema is the version the step at index i of j's chain (steps, then
// on_failure, then on_exit) was checked against when the chain was
// enqueued; j is any step, since every step carries the list.
func stepSchema(j *job.Job, i int) uint32 {
	if j.Schema == nil || i >= len(j.Schema.Steps) {
		return 0
	}
	return j.Schema.Steps[i]
}

// NeverInForce is a schema version no queue ever has: an enqueue that
// names it applies only as the replay of an Idempotency-Key's first
// request, and is refused (ErrSchemaChanged) otherwise.
const NeverInForce = ^uint32(0)

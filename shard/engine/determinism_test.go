package engine

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/wire"
)

// otherNS is a second namespace the scripts enqueue to now and then, so
// that a purge of either has another's state beside it.
const otherNS = "t_01hx0000000000000000000001/other"

// script makes a random but reproducible log: entries of one to eight
// commands of every type, naming jobs, queues, schedules and bulk
// operations from small pools so that commands meet each other (acks of
// fetched jobs, moves of dead ones, fires of enabled schedules…) as well
// as refusing often (acks of jobs that are not active, unknown ids).
type script struct {
	rng     *rand.Rand
	now     time.Time
	seq     int
	jobs    []string
	batches []string
	times   []time.Time                  // of the entries so far
	types   map[replica.CommandType]bool // the command types made so far
	next    []byte                       // a command to make next (a purge's second phase)
	idem    []IdemItem                   // the idempotency records made, as their expiry index names them
}

// scriptRetention is the retention the replays run with: short, so that
// finished jobs and records come due for pruning within a script.
const scriptRetention = 2 * time.Second

// newScriptEngine is an engine as the scripts' replays run it.
func newScriptEngine() *Engine {
	e := New(Options{Retention: scriptRetention})
	e.idemTTL, e.idemMax = scriptIdemTTL, scriptIdemMax
	return e
}

// scriptIdemTTL and scriptIdemMax keep idempotency records briefly and
// few, so that the scripts sweep and evict them.
const (
	scriptIdemTTL = 3 * time.Second
	scriptIdemMax = 3
)

var (
	scriptQueues = []string{"a", "b", "c"}
	scriptScheds = []string{"sch_01HX0000000000000000000001", "sch_01HX0000000000000000000002"}
	scriptOps    = []string{"bulk_01HX0000000000000000000001", "bulk_01HX0000000000000000000002"}
)

func (s *script) id(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%026d", prefix, s.seq)
}

func (s *script) queue() string { return scriptQueues[s.rng.Intn(len(scriptQueues))] }

// job names a job made earlier (or, once in a while, one that never was).
func (s *script) job() string {
	if len(s.jobs) == 0 || s.rng.Intn(20) == 0 {
		return fmt.Sprintf("job_%026d", 999_999)
	}
	return s.jobs[s.rng.Intn(len(s.jobs))]
}

// lease names no lease half of the time, else a lease of attempt 1 or 2
// stamped at an earlier entry's time: now and then one a job holds.
func (s *script) lease() job.LeaseID {
	if len(s.times) == 0 || s.rng.Intn(2) == 0 {
		return job.LeaseID{}
	}
	return job.LeaseID{Attempt: 1 + s.rng.Intn(2), At: s.times[s.rng.Intn(len(s.times))].UnixNano()}
}

func (s *script) newJob() *job.Job {
	j := &job.Job{ID: s.id("job_"), Queue: s.queue(), Payload: []byte(`{"n":1}`), MaxRetries: s.rng.Intn(3),
		Backoff: job.BackoffFixed, BaseDelay: int64(time.Second), MaxDelay: int64(time.Minute),
		Priority: job.Priority(s.rng.Intn(3)), Tags: map[string]string{"k": fmt.Sprint(s.rng.Intn(3))}}
	switch s.rng.Intn(8) {
	case 0:
		j.ScheduledAt = s.now.Add(time.Duration(s.rng.Intn(5)) * time.Second).UnixNano()
	case 1:
		j.UniqueKey, j.UniqueUntil = "u"+fmt.Sprint(s.rng.Intn(2)), int64(time.Minute)
	case 2:
		j.ExpireAfter = int64(time.Duration(1+s.rng.Intn(5)) * time.Second)
	case 3:
		if len(s.jobs) > 0 {
			j.DependsOn = []string{s.jobs[s.rng.Intn(len(s.jobs))]}
		}
	case 4:
		j.ChainID, j.Chain = s.id("chain_"), []byte(`{"steps":[{"queue":"a"},{"queue":"b"}],"on_failure":{"queue":"c"}}`)
	case 5:
		j.ChainID, j.Chain = s.id("chain_"), []byte(`{"steps":[{"queue":"a"},{"queue":"b","priority":"high","max_retries":0,`+
			`"retry_backoff":"linear","retry_base_delay":"2s","retry_max_delay":3,"expire_after":"1m","lease_duration":"2s",`+
			`"tags":{"step":"b"},"traceparent":"00-0000000000000000000000000000000b-000000000000000b-00"}],"on_exit":{"queue":"c","max_retries":1}}`)
		j.OwnLeaseNs = int64(3 * time.Second)
		j.Flow |= job.FlowChainIndexed // case 4's chain is one of an older log, not indexed
	}
	var fkey, ckey string
	if s.rng.Intn(3) == 0 {
		fkey = "f" + fmt.Sprint(s.rng.Intn(3))
	}
	if s.rng.Intn(3) == 0 {
		ckey = "c" + fmt.Sprint(s.rng.Intn(2))
	}
	j.SetKeys(ckey, fkey)
	if s.rng.Intn(4) == 0 {
		j.SetTrace(fmt.Sprintf("00-%032x-%016x-01", 1+s.rng.Intn(1000), 1+s.rng.Intn(1000)), "k=v")
	}
	s.jobs = append(s.jobs, j.ID)
	return j
}

// command makes one command of a random type, or nil when the maker
// passed its turn.
func (s *script) command() []byte {
	if b := s.next; b != nil {
		s.next = nil
		s.types[replica.CommandType(b[0])] = true
		return b
	}
	i := s.rng.Intn(len(scriptCommands))
	if s.rng.Intn(2) == 0 {
		i = s.rng.Intn(4) // half of the time a job's own lifecycle: enqueue, fetch, ack, fail
	}
	b := scriptCommands[i].cmd(s)
	if b != nil {
		s.types[replica.CommandType(b[0])] = true
	}
	return b
}

// scriptEnqueue makes an enqueue of one to three jobs, now and then a
// batch, another namespace's or a refused one.
func scriptEnqueue(s *script) []byte {
	c := &EnqueueCmd{NS: testNS}
	if s.rng.Intn(8) == 0 {
		c.NS = otherNS
	}
	if s.rng.Intn(4) == 0 {
		c.MaxPending = int64(5 + s.rng.Intn(20)) // sometimes refused
	}
	traced := false
	for range 1 + s.rng.Intn(3) {
		j := s.newJob()
		traced = traced || j.Trace != nil || j.Flow.Has(job.FlowChainIndexed) // case 5's chain names a trace
		c.Deps = c.Deps || len(j.DependsOn) > 0
		c.Jobs = append(c.Jobs, j.Encode())
		c.Defaulted = append(c.Defaulted, uint8(s.rng.Intn(32)))
	}
	if s.rng.Intn(4) == 0 {
		defer func() { s.batches = append(s.batches, c.Batch.ID) }()
		c.Batch = &BatchRecord{ID: s.id("batch_"), CallbackQueue: "done", CallbackPayload: []byte(`{"b":1}`), Prunable: s.rng.Intn(2) == 0}
		if s.rng.Intn(2) == 0 {
			c.Batch.TraceParent = "00-0000000000000000000000000000000c-000000000000000c-01"
		}
	}
	return EnqueueFor(c, traced).Command(c)
}

// scriptCmd adapts a function to the command maker interface.
type scriptCmd func(*script) []byte

func (f scriptCmd) cmd(s *script) []byte { return f(s) }

var scriptCommands = []interface{ cmd(*script) []byte }{
	scriptCmd(scriptEnqueue),
	scriptCmd(func(s *script) []byte {
		c := &FetchCmd{NS: testNS, Queues: scriptQueues, WorkerID: "w", LeaseNs: int64(2 * time.Second),
			LeaseDefault: s.rng.Intn(2) == 0, Named: s.rng.Intn(2) == 0}
		return FetchFor(c).Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		step := ""
		if s.rng.Intn(3) == 0 {
			step = wire.StepExit
		}
		c := &AckCmd{NS: testNS, ID: s.job(), Result: []byte(`{"ok":true}`), Step: step, Lease: s.lease()}
		return AckFor(c).Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		c := &FailCmd{NS: testNS, ID: s.job(), Error: "boom", Lease: s.lease()}
		return FailFor(c).Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		c := &HeartbeatCmd{NS: testNS, Jobs: []HeartbeatItem{{ID: s.job(), Progress: []byte(`{"current":1}`),
			Checkpoint: []byte(`{"at":1}`), Lease: s.lease()}}}
		return HeartbeatFor(c).Command(c)
	}),
	scriptCmd(func(s *script) []byte { return Promote.Command(&SweepCmd{NS: testNS, IDs: s.jobsSample()}) }),
	scriptCmd(func(s *script) []byte { return Reclaim.Command(&SweepCmd{NS: testNS, IDs: s.jobsSample()}) }),
	scriptCmd(func(s *script) []byte { return Expire.Command(&SweepCmd{NS: testNS, IDs: s.jobsSample()}) }),
	scriptCmd(func(s *script) []byte { return JobPrune.Command(&SweepCmd{NS: testNS, IDs: s.jobsSample()}) }),
	scriptCmd(func(s *script) []byte {
		c := &ScheduleCmd{NS: testNS, Sched: s.schedule(), QueueNames: s.rng.Intn(2) == 0}
		return ScheduleCreateFor(c).Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		c := &ScheduleCmd{NS: testNS, Sched: s.schedule(), QueueNames: s.rng.Intn(2) == 0}
		return ScheduleUpdateFor(c).Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		return ScheduleDelete.Command(&ScheduleIDCmd{NS: testNS, ID: scriptScheds[s.rng.Intn(2)]})
	}),
	scriptCmd(func(s *script) []byte {
		return ScheduleEnable.Command(&ScheduleIDCmd{NS: testNS, ID: scriptScheds[s.rng.Intn(2)], NextRun: s.now.Add(time.Second).UnixNano()})
	}),
	scriptCmd(func(s *script) []byte {
		return ScheduleDisable.Command(&ScheduleIDCmd{NS: testNS, ID: scriptScheds[s.rng.Intn(2)]})
	}),
	scriptCmd(func(s *script) []byte {
		run := s.now.Truncate(time.Second).UnixNano()
		c := &FireCmd{NS: testNS, ID: scriptScheds[s.rng.Intn(2)], RunAt: run, NextRun: run + int64(time.Second), JobID: s.id("job_"),
			QueueDefaults: s.rng.Intn(2) == 0}
		if s.rng.Intn(3) == 0 {
			c.Trace = fmt.Sprintf("00-%032x-%016x-01", 1+s.rng.Intn(1000), 1+s.rng.Intn(1000))
		}
		return ScheduleFireFor(c).Command(c)
	}),
	scriptCmd(func(s *script) []byte { return JobRetry.Command(&JobOpCmd{NS: testNS, ID: s.job()}) }),
	scriptCmd(func(s *script) []byte { return JobCancel.Command(&JobOpCmd{NS: testNS, ID: s.job()}) }),
	scriptCmd(func(s *script) []byte { return JobMove.Command(&JobOpCmd{NS: testNS, ID: s.job(), Queue: s.queue()}) }),
	scriptCmd(func(s *script) []byte { return JobDelete.Command(&JobOpCmd{NS: testNS, ID: s.job()}) }),
	scriptCmd(func(s *script) []byte { return QueuePause.Command(&QueueCmd{NS: testNS, Queue: s.queue()}) }),
	scriptCmd(func(s *script) []byte { return QueueResume.Command(&QueueCmd{NS: testNS, Queue: s.queue()}) }),
	scriptCmd(func(s *script) []byte { return QueueDrain.Command(&QueueCmd{NS: testNS, Queue: s.queue()}) }),
	scriptCmd(func(s *script) []byte { return QueueClear.Command(&QueueSweepCmd{NS: testNS, Queue: s.queue()}) }),
	scriptCmd(func(s *script) []byte {
		if s.rng.Intn(4) != 0 {
			return nil // rarer than the rest: it empties a queue
		}
		return QueueDelete.Command(&QueueSweepCmd{NS: testNS, Queue: s.queue()})
	}),
	scriptCmd(func(s *script) []byte {
		return QueueConcurrency.Command(&QueueLimitCmd{NS: testNS, Queue: s.queue(), Max: int64(s.rng.Intn(3))})
	}),
	scriptCmd(func(s *script) []byte {
		return QueueThrottle.Command(&QueueThrottleCmd{NS: testNS, Queue: s.queue(), Rate: int64(s.rng.Intn(3)), Period: int64(time.Second)})
	}),
	scriptCmd(func(s *script) []byte {
		r := s.rng.Intn(5)
		return QueueDefaultsSet.Command(&QueueDefaultsCmd{NS: testNS, Queue: s.queue(),
			Defaults: QueueDefaults{MaxRetries: &r, Backoff: job.BackoffLinear, LeaseNs: int64(time.Second), Retention: int64(time.Minute)}})
	}),
	scriptCmd(func(s *script) []byte {
		c := &FetchBatchCmd{Max: 1 + s.rng.Intn(4), Fetch: FetchCmd{NS: testNS, Queues: scriptQueues, WorkerID: "w2",
			LeaseNs: int64(time.Second), Named: s.rng.Intn(2) == 0}}
		return FetchBatchFor(c).Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		c := &AckBatchCmd{NS: testNS, WorkerID: "w2", Items: []AckBatchItem{{ID: s.job()}, {ID: s.job(), Lease: s.lease()}}}
		return AckBatchFor(c).Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		actions := []string{job.BulkRetry, job.BulkDelete, job.BulkCancel, job.BulkMove, job.BulkRequeue, job.BulkChangePriority}
		c := &BulkCmd{NS: testNS, Action: actions[s.rng.Intn(len(actions))], IDs: s.jobsSample(), Queue: s.queue(), Priority: uint8(s.rng.Intn(3))}
		if s.rng.Intn(2) == 0 {
			c.Op, c.From, c.Next, c.Done = scriptOps[s.rng.Intn(2)], nil, []byte("cursor"), s.rng.Intn(2) == 0
		}
		return BulkApply.Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		return BulkCreate.Command(&BulkOpCmd{NS: testNS, Op: &BulkOp{ID: scriptOps[s.rng.Intn(2)], Action: job.BulkRetry, Filter: []byte(`{"state":["dead"]}`), Prunable: s.rng.Intn(2) == 0}})
	}),
	scriptCmd(func(s *script) []byte {
		return BulkCancel.Command(&BulkOpCmd{NS: testNS, ID: scriptOps[s.rng.Intn(2)]})
	}),
	scriptCmd(func(s *script) []byte {
		l := s.lease()
		items := []ReleaseItem{{ID: s.job(), Attempt: 1}, {ID: s.job(), Attempt: max(l.Attempt, s.rng.Intn(3)), Lease: l}}
		c := &ReleaseCmd{NS: testNS, WorkerID: []string{"w", "w2", ""}[s.rng.Intn(3)], Jobs: items}
		return ReleaseFor(c).Command(c)
	}),
	scriptCmd(func(s *script) []byte { return ReclaimCounted.Command(&SweepCmd{NS: testNS, IDs: s.jobsSample()}) }),
	scriptCmd(func(s *script) []byte { return JobDiscard.Command(&JobOpCmd{NS: testNS, ID: s.job()}) }),
	scriptCmd(func(s *script) []byte {
		actions := []string{job.BulkDelete, job.BulkDelete, job.BulkCancel, job.BulkRetry}
		c := &BulkCmd{NS: testNS, Action: actions[s.rng.Intn(len(actions))], IDs: s.jobsSample()}
		if s.rng.Intn(2) == 0 {
			c.Op, c.From, c.Next, c.Done = scriptOps[s.rng.Intn(2)], nil, []byte("cursor"), s.rng.Intn(2) == 0
		}
		return BulkApplySettle.Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		return QueueClearAll.Command(&QueueSweepCmd{NS: testNS, Queue: s.queue(), Phase: uint8(s.rng.Intn(2))})
	}),
	scriptCmd(func(s *script) []byte {
		if s.rng.Intn(4) != 0 {
			return nil
		}
		return QueueDeleteSettle.Command(&QueueSweepCmd{NS: testNS, Queue: s.queue()})
	}),
	scriptCmd(func(s *script) []byte {
		// An index entry is at a finishing entry's time plus the
		// retention: name the times of entries that just came due, and
		// recent records, so that some entries exist.
		due := len(s.times)
		for due > 0 && s.times[due-1].Add(scriptRetention).After(s.now) {
			due--
		}
		ids := append(append([]string{}, scriptOps...), s.batches[max(len(s.batches)-6, 0):]...)
		c := &RecordPruneCmd{NS: testNS}
		for i := max(due-40, 0); i < due; i++ {
			for _, id := range ids {
				c.Items = append(c.Items, RecordItem{At: s.times[i].Add(scriptRetention).UnixNano(), ID: id})
			}
		}
		return RecordPrune.Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		c := &QueueConfigCmd{NS: testNS, Queue: s.queue(), Description: "d", Paused: s.rng.Intn(3) == 0, Max: int64(s.rng.Intn(3)),
			KeyMax: int64(s.rng.Intn(3))}
		if s.rng.Intn(2) == 0 {
			c.Rate, c.Period = int64(1+s.rng.Intn(3)), int64(1+s.rng.Intn(2))*int64(time.Second)
		}
		if s.rng.Intn(2) == 0 {
			r := s.rng.Intn(5)
			c.Defaults = QueueDefaults{MaxRetries: &r, ExpireAfter: int64(time.Duration(1+s.rng.Intn(3)) * time.Second)}
		}
		return QueueConfigure.Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		if s.rng.Intn(6) != 0 {
			return nil // rarer than the rest: it empties the namespace
		}
		c := &NamespacePurgeCmd{NS: testNS}
		if s.rng.Intn(4) == 0 {
			c.NS = otherNS
		}
		if s.rng.Intn(3) == 0 {
			c.After = keys.Job(c.NS, s.job())
		}
		// The jobs go (the scripts make far fewer than a step's bound),
		// then, in the same entry or the next, the rest.
		s.next = NamespacePurge.Command(&NamespacePurgeCmd{NS: c.NS, Phase: 1})
		return NamespacePurge.Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		op := &BulkOp{ID: scriptOps[s.rng.Intn(2)], Action: job.BulkRetry, Filter: []byte(`{"state":["dead"]}`), Prunable: true,
			Scoped: true, Scope: [][]string{nil, {"a"}, {"b*", "c"}}[s.rng.Intn(3)]}
		return BulkCreateScoped.Command(&BulkOpCmd{NS: testNS, Op: op})
	}),
	scriptCmd(func(s *script) []byte {
		c := &NamespaceConfigCmd{NS: testNS, Config: NamespaceConfig{Retention: int64(s.rng.Intn(3)) * int64(time.Minute)}}
		if s.rng.Intn(4) == 0 {
			c.NS = otherNS
		}
		return NamespaceConfigure.Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		c := &NamespaceConfigCmd{NS: testNS, KeepRetention: s.rng.Intn(2) == 0, KeepEgress: s.rng.Intn(3) == 0}
		if s.rng.Intn(2) == 0 {
			c.Config.EgressAllow = []string{"hooks.example.com", "*.example.net"}[:1+s.rng.Intn(2)]
		}
		c.Config.Retention = int64(s.rng.Intn(2)) * int64(time.Minute)
		return NamespaceConfigureEgress.Command(c)
	}),
	scriptCmd(func(s *script) []byte { return UsageSweep.Command(&UsageSweepCmd{}) }),
	// The event log starts part way through; trims cut it at a recent
	// entry (the script's entries are the log's indexes from 1).
	scriptCmd(func(s *script) []byte { return EventLogStart.Command(&EventLogStartCmd{}) }),
	// The wide start first, the counted one after it (drawing nothing, so
	// the rest of a seed's script stays as it was).
	scriptCmd(func(s *script) []byte {
		if s.types[EventLogStartWide.Type] {
			return EventLogStartCounted.Command(&EventLogStartCmd{})
		}
		return EventLogStartWide.Command(&EventLogStartCmd{})
	}),
	scriptCmd(func(s *script) []byte { return EventLogStartDetailed.Command(&EventLogStartCmd{}) }),
	scriptCmd(func(s *script) []byte {
		idx := max(len(s.times)-s.rng.Intn(30), 1)
		return EventTrim.Command(&EventTrimCmd{NS: testNS, Through: uint64(idx)<<EventSeqBits | uint64(s.rng.Intn(4))})
	}),
	scriptCmd(func(s *script) []byte {
		c := &EventRetentionCmd{NS: testNS, Hours: int64(1 + s.rng.Intn(720)), Events: int64(1000 + s.rng.Intn(5000))}
		if s.rng.Intn(4) == 0 {
			c.NS = "t_nobody/never" // no state there: nothing recorded
		}
		if s.rng.Intn(8) == 0 {
			c.Events = 1 // refused
		}
		return EventRetentionSet.Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		c := &QueueConfigCmd{NS: testNS, Queue: s.queue(), Push: &PushConfig{URL: "https://h.example/" + s.queue(),
			WhenNoWork: s.rng.Intn(2) == 0, TimeoutNs: int64(time.Second), MaxInFlight: 1 + s.rng.Intn(3),
			Headers: []PushHeader{{Name: "X-A", Value: "1"}}}}
		if s.rng.Intn(2) == 0 {
			s.next = PushDisable.Command(&PushDisableCmd{NS: testNS, Queue: c.Queue, URL: c.Push.URL, Reason: "410"})
		}
		return QueueConfigurePush.Command(c)
	}),
	scriptCmd(func(s *script) []byte {
		seed := make([]byte, 32)
		s.rng.Read(seed)
		return SigningKeysAdd.Command(&SigningKeysCmd{NS: testNS, Key: SigningKey{ID: fmt.Sprint("k", s.rng.Intn(100)),
			Secret: "whsk_" + base64.StdEncoding.EncodeToString(seed)}, OverlapNs: int64(s.rng.Intn(3)) * int64(time.Second), First: s.rng.Intn(2) == 0})
	}),
	scriptCmd(func(s *script) []byte {
		q := s.queue()
		return PushDisable.Command(&PushDisableCmd{NS: testNS, Queue: q, URL: "https://h.example/" + q, Reason: "410"})
	}),
	// Idempotent enqueues: three keys and two request hashes, so a key
	// meets its own request (a replay) and another one (refused); the
	// sweep names records due and not yet due.
	scriptCmd(func(s *script) []byte {
		inner := scriptEnqueue(s)
		key := fmt.Sprint("k", s.rng.Intn(3))
		s.idem = append(s.idem, IdemItem{At: s.now.Add(scriptIdemTTL).UnixNano(), Key: key})
		return IdemApply.Command(&IdemCmd{NS: testNS, Key: key, Hash: []byte{byte(s.rng.Intn(2))}, Echo: []byte("e"), Cmd: inner})
	}),
	scriptCmd(func(s *script) []byte {
		var items []IdemItem
		for _, it := range s.idem {
			if s.rng.Intn(2) == 0 {
				items = append(items, it)
			}
		}
		return IdemSweep.Command(&IdemSweepCmd{NS: testNS, Items: items})
	}),
	// Webhooks: two ids, so creates meet existing ones and updates,
	// deletes, rotations and progress meet missing ones.
	scriptCmd(func(s *script) []byte {
		w := WebhookRecord{ID: fmt.Sprint("wh", s.rng.Intn(2)), URL: "https://h.example/w", Events: []string{"job.completed"},
			Queues: [][]string{nil, {"a*"}}[s.rng.Intn(2)], Enabled: s.rng.Intn(4) != 0, Description: "d"}
		if s.rng.Intn(2) == 0 {
			return WebhookUpdate.Command(&WebhookCmd{NS: testNS, Hook: w})
		}
		return WebhookCreate.Command(&WebhookCmd{NS: testNS, Hook: w})
	}),
	scriptCmd(func(s *script) []byte {
		id := fmt.Sprint("wh", s.rng.Intn(2))
		switch s.rng.Intn(4) {
		case 0:
			return WebhookDelete.Command(&WebhookIDCmd{NS: testNS, ID: id})
		case 1:
			seed := make([]byte, 32)
			s.rng.Read(seed)
			return WebhookSecret.Command(&WebhookSecretCmd{NS: testNS, ID: id, Key: SigningKey{ID: fmt.Sprint("s", s.rng.Intn(100)),
				Secret: "whsec_" + base64.StdEncoding.EncodeToString(seed)}, OverlapNs: int64(s.rng.Intn(3)) * int64(time.Second)})
		}
		idx := max(len(s.times)-s.rng.Intn(30), 1)
		var updated int64
		if len(s.times) > 0 {
			updated = s.times[max(len(s.times)-1-s.rng.Intn(3), 0)].UnixNano()
		}
		// Updated names a recent entry's time: now and then the last
		// change's, so the failing run and the disable apply.
		c := &WebhookProgressCmd{NS: testNS, ID: id, Cursor: uint64(idx) << EventSeqBits, Updated: updated,
			FailingSince: int64(s.rng.Intn(2)), Disable: s.rng.Intn(3) == 0, Reason: "failing", Attempts: s.rng.Intn(3)}
		if s.rng.Intn(2) == 0 {
			c.Log = s.deliveries()
		}
		return WebhookProgressFor(c).Command(c)
	}),
	// A test's or a redelivery's attempt, for the delivery log.
	scriptCmd(func(s *script) []byte {
		return WebhookLog.Command(&WebhookLogCmd{NS: testNS, ID: fmt.Sprint("wh", s.rng.Intn(2)), Log: s.deliveries()})
	}),
	// A push delivery: the dispatcher's worker leases a job of a queue,
	// and settles one (its own or another) by an ack or a fail.
	scriptCmd(func(s *script) []byte {
		q := s.queue()
		f := &FetchCmd{NS: testNS, Queues: []string{q}, WorkerID: PushWorker(q), LeaseNs: int64(2 * time.Second), Named: true}
		switch s.rng.Intn(3) {
		case 0:
			c := &AckCmd{NS: testNS, ID: s.job(), WorkerID: PushWorker(q), Result: []byte(`{"ok":1}`), Lease: s.lease()}
			s.next = AckFor(c).Command(c)
		case 1: // its acks grouped
			c := &AckBatchCmd{NS: testNS, WorkerID: PushWorker(q), Items: []AckBatchItem{{ID: s.job(), Lease: s.lease()}, {ID: s.job(), Lease: s.lease()}}}
			s.next = AckBatchFor(c).Command(c)
		default:
			c := &FailCmd{NS: testNS, ID: s.job(), WorkerID: PushWorker(q), Error: "500", Lease: s.lease()}
			s.next = FailFor(c).Command(c)
		}
		return FetchFor(f).Command(f)
	}),
	// A restore into otherNS (a replace now and then) of a settings record
	// and a queue, ended or aborted later; steps of a restore that is not
	// running are refused.
	scriptCmd(func(s *script) []byte {
		s.next = RestoreChunk.Command(&RestoreChunkCmd{NS: otherNS, Token: "t", Recs: []RestoreRecord{
			{Key: keys.NamespaceConfig("")[1:], Value: replica.Encode(&NamespaceConfig{Retention: int64(time.Minute)})},
			{Key: keys.Queue("", "a")[1:], Value: replica.Encode(&QueueRecord{Name: "a", Counts: make([]int64, 8)})},
		}})
		return RestoreBegin.Command(&RestoreBeginCmd{NS: otherNS, Token: "t", Replace: s.rng.Intn(2) == 0})
	}),
	scriptCmd(func(s *script) []byte {
		if s.rng.Intn(3) == 0 {
			return RestoreAbort.Command(&RestoreTokenCmd{NS: otherNS, Token: "t"})
		}
		return RestoreEnd.Command(&RestoreTokenCmd{NS: otherNS, Token: "t"})
	}),
	// Moves: a fence (of either namespace, for a second, so commands
	// meet it and it lapses), lifted now and then; otherNS finished
	// (moved away, until a restore begins into it again); a move's chunk
	// of sets and deletes and its end, into the restore of otherNS.
	scriptCmd(func(s *script) []byte {
		ns := otherNS
		if s.rng.Intn(3) == 0 {
			ns = testNS
		}
		if s.rng.Intn(3) == 0 {
			s.next = MoveUnfence.Command(&MoveTokenCmd{NS: ns, Token: "m"})
		}
		return MoveFence.Command(&MoveFenceCmd{NS: ns, Token: "m", TTL: int64(time.Second)})
	}),
	scriptCmd(func(s *script) []byte {
		return MoveFinish.Command(&MoveFinishCmd{NS: otherNS, Token: "m", To: "shard-2"})
	}),
	scriptCmd(func(s *script) []byte {
		c := &MoveChunkCmd{NS: otherNS, Token: "t", Dels: [][]byte{keys.Queue("", "never")[1:]}}
		if s.rng.Intn(2) == 0 {
			c.Recs = []RestoreRecord{{Key: keys.Queue("", "z")[1:], Value: replica.Encode(&QueueRecord{Name: "z", Counts: make([]int64, 8)})}}
		} else {
			c.Dels = append(c.Dels, keys.Queue("", "z")[1:])
		}
		return MoveChunk.Command(c)
	}),
	scriptCmd(func(s *script) []byte { return MoveEnd.Command(&RestoreTokenCmd{NS: otherNS, Token: "t"}) }),
	scriptCmd(func(s *script) []byte {
		if s.rng.Intn(2) == 0 {
			s.next = RestoreAbort.Command(&RestoreTokenCmd{NS: otherNS, Token: "t"}) // removes it, unless touched
		}
		return MoveEndMarked.Command(&RestoreTokenCmd{NS: otherNS, Token: "t"})
	}),
}

func (s *script) jobsSample() []string {
	out := make([]string, 1+s.rng.Intn(4))
	for i := range out {
		out[i] = s.job()
	}
	return out
}

func (s *script) schedule() Schedule {
	return Schedule{ID: scriptScheds[s.rng.Intn(2)], Name: fmt.Sprint("s", s.rng.Intn(3)), Queue: s.queue(), Cron: "@every 1s",
		Timezone: "UTC", Payload: []byte(`{}`), MaxRetries: 1, Enabled: s.rng.Intn(3) != 0, NextRun: s.now.Add(time.Second).Truncate(time.Second).UnixNano(),
		DefaultRetries: s.rng.Intn(2) == 0}
}

// entry is one log entry of the script: its clock and commands.
type entry struct {
	now  time.Time
	cmds [][]byte
}

// makeScript makes a script of entries. It starts a minute before an hour
// (1_800_000_000 is one) so that usage meters cross it, and its first
// entry starts metering, which most of the script then exercises.
func makeScript(seed int64, entries int) ([]entry, map[replica.CommandType]bool) {
	s := &script{rng: rand.New(rand.NewSource(seed)), now: time.Unix(1_800_000_000-60, 0).UTC(), types: map[replica.CommandType]bool{}}
	out := make([]entry, 0, entries)
	for i := range entries {
		s.now = s.now.Add(time.Duration(s.rng.Intn(700)) * time.Millisecond)
		s.times = append(s.times, s.now)
		e := entry{now: s.now}
		if i == 0 {
			e.cmds = append(e.cmds, UsageSweep.Command(&UsageSweepCmd{}))
		}
		for len(e.cmds) < 1+s.rng.Intn(8) {
			if c := s.command(); c != nil {
				e.cmds = append(e.cmds, c)
			}
		}
		out = append(out, e)
	}
	return out, s.types
}

// replay applies the script to a fresh engine and returns every key and
// value of its state, in order.
func replay(t *testing.T, log []entry) []byte { return replayCaches(t, log, false) }

// replayCaches is replay, with the engine's caches dropped before every
// entry when cold (as a snapshot restore drops them).
func replayCaches(t *testing.T, log []entry, cold bool) []byte {
	t.Helper()
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	defer db.Close()
	eng := newScriptEngine()
	loc, err := replica.NewLocal(db, eng.Registry())
	require.NoError(t, err)
	for _, e := range log {
		if cold {
			eng.reset()
		}
		loc.Apply(e.now, e.cmds...)
	}
	require.Zero(t, loc.Redos(), "a refused command had written before refusing")
	var buf bytes.Buffer
	it, err := db.NewIter(nil)
	require.NoError(t, err)
	for it.First(); it.Valid(); it.Next() {
		fmt.Fprintf(&buf, "%x=%x\n", it.Key(), it.Value())
	}
	require.NoError(t, it.Close())
	return buf.Bytes()
}

// Two fresh state machines applying the same log end with the same bytes:
// a random script of every command type, several seeds.
func TestRandomLogsApplyDeterministically(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 3; seed++ {
		log, _ := makeScript(seed, 400)
		a, b := replay(t, log), replay(t, log)
		require.NotEmpty(t, a)
		require.True(t, bytes.Equal(a, b), "seed %d: two replicas diverged", seed)
	}
}

// The caches only spare reads: a replica whose caches start empty at every
// entry (one restored from a snapshot, over and over) ends with the same
// bytes as one that kept them. Purges drop cached state as they go.
func TestCachesNeverChangeTheState(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 3; seed++ {
		log, _ := makeScript(seed, 400)
		warm, cold := replayCaches(t, log, false), replayCaches(t, log, true)
		require.True(t, bytes.Equal(warm, cold), "seed %d: a replica with cold caches diverged", seed)
	}
}

// The registry holds every command the engine defines, and the scripts
// above exercise every one of them.
func TestRegistryCoversEveryCommand(t *testing.T) {
	t.Parallel()
	reg := New(Options{}).Registry()
	registered := reg.Types()
	for i, typ := range registered {
		require.EqualValues(t, i+1, typ, "types are dense and append-only")
		require.NotEmpty(t, reg.Name(typ))
	}
	require.Len(t, registered, 91, "a new command needs its handler, its script case and this count")
	_, used := makeScript(1, 2000) // long enough that the rarest maker comes up
	for _, typ := range registered {
		require.True(t, used[typ], "the determinism script never makes command %d (%s)", typ, reg.Name(typ))
	}
}

// deliveries are up to 60 delivery log records, so a log fills and trims.
func (s *script) deliveries() []WebhookAttempt {
	out := make([]WebhookAttempt, 1+s.rng.Intn(60))
	for i := range out {
		out[i] = WebhookAttempt{EventID: fmt.Sprint("s1:", s.rng.Intn(1000)), Type: "dev.jobbie.job.completed", At: int64(s.rng.Intn(1e9)),
			Attempt: 1 + s.rng.Intn(3), Status: []int{0, 200, 500}[s.rng.Intn(3)], LatencyUs: int64(s.rng.Intn(1e6)),
			Error: string(bytes.Repeat([]byte("e"), s.rng.Intn(1500))), OK: s.rng.Intn(2) == 0}
	}
	return out
}

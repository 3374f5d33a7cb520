package engine

import (
	"fmt"
	"math/rand"
	"time"

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

// scriptJobCommands make the commands of jobs, queues, schedules,
// batches, bulk operations and namespaces; scriptMoreCommands
// (determinism_script_more_test.go) the rest. The script picks from both
// as one list, in this order.
var scriptJobCommands = []interface{ cmd(*script) []byte }{
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

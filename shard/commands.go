package shard

import "github.com/jobbie/jobbie/internal/replica"

// Command types of the shard log. Append-only: never renumber or reuse.
const (
	cmdEnqueue   replica.CommandType = 1
	cmdFetch     replica.CommandType = 2
	cmdAck       replica.CommandType = 3
	cmdFail      replica.CommandType = 4
	cmdHeartbeat replica.CommandType = 5
	cmdPromote   replica.CommandType = 6
	cmdReclaim   replica.CommandType = 7
	cmdExpire    replica.CommandType = 8

	cmdScheduleCreate  replica.CommandType = 9
	cmdScheduleUpdate  replica.CommandType = 10
	cmdScheduleDelete  replica.CommandType = 11
	cmdScheduleEnable  replica.CommandType = 12
	cmdScheduleDisable replica.CommandType = 13
	cmdScheduleFire    replica.CommandType = 14

	cmdJobRetry  replica.CommandType = 15
	cmdJobCancel replica.CommandType = 16
	cmdJobMove   replica.CommandType = 17
	cmdJobDelete replica.CommandType = 18
	cmdJobPrune  replica.CommandType = 19

	cmdQueuePause       replica.CommandType = 20
	cmdQueueResume      replica.CommandType = 21
	cmdQueueDrain       replica.CommandType = 22
	cmdQueueClear       replica.CommandType = 23
	cmdQueueDelete      replica.CommandType = 24
	cmdQueueConcurrency replica.CommandType = 25
	cmdQueueThrottle    replica.CommandType = 26
	cmdQueueDefaults    replica.CommandType = 27

	cmdFetchBatch replica.CommandType = 28
	cmdAckBatch   replica.CommandType = 29

	cmdBulkApply  replica.CommandType = 30
	cmdBulkCreate replica.CommandType = 31
	cmdBulkCancel replica.CommandType = 32
)

// registry builds the dispatch table; each family registers its own.
func (e *Engine) registry() *replica.Registry {
	r := new(replica.Registry)
	e.observers = append(e.observers, e.queueObserver)
	e.observers = append(e.observers, e.eventObserver(), e.workerObserver())
	e.observers = append(e.observers, countEvents())
	e.heads = pendingHeads{}
	e.queues = newQueueCache()
	e.jobs = newJobCache(jobCacheSize)
	e.floors = &timeFloors{m: map[string]int64{}}
	e.swept = map[string]int64{}
	r.OnReset(func() {
		e.heads = pendingHeads{}
		e.queues.reset()
		e.jobs.reset()
		e.floors.reset()
		e.swept = map[string]int64{} // sweeps start again from the bottom
	})
	e.registerEnqueue(r)
	e.registerFetch(r)
	e.registerQueues(r)
	e.registerWork(r)
	e.registerJobOps(r)
	e.registerSweeps(r)
	e.registerSchedules(r)
	e.registerBatchWork(r)
	e.registerBulk(r)
	return r
}

// typed wraps a handler that decodes its payload into C.
func typed[C any](h func(tx *replica.Tx, c *C) any) replica.Handler {
	return func(tx *replica.Tx, payload []byte) (any, error) {
		c := new(C)
		if err := decode(payload, c); err != nil {
			panic("shard: undecodable command: " + err.Error())
		}
		res := h(tx, c)
		if err, ok := res.(error); ok {
			return nil, err
		}
		return res, nil
	}
}

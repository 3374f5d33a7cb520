package service

import (
	"encoding/json"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/shard/keys"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// GetChain reads, from local state, the chain job id is a step of: its
// definition's steps in order, each with the job that runs it as the
// chain's index (keys.ChainStep) finds it. A job that is no chain's step
// is not found as a chain. Under a limited scope the chain is shown only
// if every queue it names and every step job's queue is in the scope, as
// a batch is: a step outside it would tell of that queue's jobs.
func (s *Service) GetChain(ns string, sc tenancy.QueueScope, id string) (*wire.ChainView, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	if jobIDOK(id) != nil {
		return nil, jobNotFound(id)
	}
	snap := s.node.DB().NewSnapshot()
	defer snap.Close()
	j, err := engine.ReadJob(snap, ns, id)
	if err != nil {
		return nil, err
	}
	if !sc.Allows(j.Queue) {
		return nil, jobNotFound(id)
	}
	if j.ChainID == "" {
		return nil, apierr.New(apierr.NotFound, "job %s is not a step of a chain", id)
	}
	var def wire.ChainSpec
	if err := json.Unmarshal(j.Chain, &def); err != nil {
		return nil, err
	}
	v := &wire.ChainView{ChainID: j.ChainID, Step: j.ChainStep, Steps: make([]wire.ChainStepView, len(def.Steps))}
	queues := []string{}
	for i, st := range def.Steps {
		v.Steps[i] = wire.ChainStepView{Step: i, Queue: st.Queue} // the enqueue filled in steps[0]'s
		queues = append(queues, st.Queue)
	}
	if def.OnFailure != nil {
		v.OnFailureQueue = &def.OnFailure.Queue
		queues = append(queues, def.OnFailure.Queue)
	}
	if def.OnExit != nil {
		v.OnExitQueue = &def.OnExit.Queue
		queues = append(queues, def.OnExit.Queue)
	}
	jobs := map[int]*job.Job{j.ChainStep: j}
	p := keys.ChainSteps(ns, j.ChainID)
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: keys.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		step, sid, err := keys.StepID(it.Key())
		if err != nil || int(step) >= len(v.Steps) {
			continue
		}
		if sj, err := engine.ReadJob(snap, ns, sid); err == nil {
			jobs[int(step)] = sj
		}
	}
	for step, sj := range jobs {
		if step >= len(v.Steps) {
			continue
		}
		queues = append(queues, sj.Queue)
		sv := &v.Steps[step]
		sv.JobID, sv.JobQueue = &sj.ID, &sj.Queue
		state := sj.State.String()
		sv.State, sv.CreatedAt, sv.CompletedAt = &state, ts(sj.CreatedAt), ts(sj.CompletedAt)
	}
	for _, q := range queues {
		if !sc.Allows(q) {
			return nil, jobNotFound(id)
		}
	}
	return v, nil
}

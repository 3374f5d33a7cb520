package service

import (
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/job"
	"github.com/jobbie/jobbie/wire"
)

// traceOf validates a W3C trace context named by field ("", "jobs[3].",
// "chain.steps[1].", or a header's name) and returns it as a job keeps
// it: nil when parent and state are both empty. A tracestate needs its
// traceparent.
func traceOf(field, parent, state string) (*job.Trace, error) {
	if parent == "" {
		if state != "" {
			return nil, apierr.Field(field+wire.TraceStateHeader, "%stracestate needs a traceparent", field)
		}
		return nil, nil
	}
	if err := wire.CheckTraceParent(parent); err != nil {
		return nil, apierr.Field(field+wire.TraceParentHeader, "%s%v", field, err)
	}
	if err := wire.CheckTraceState(state); err != nil {
		return nil, apierr.Field(field+wire.TraceStateHeader, "%s%v", field, err)
	}
	return &job.Trace{Parent: parent, State: state}, nil
}

// CheckTraceHeaders validates the trace context of a request's
// traceparent and tracestate headers, a 400 naming the header.
func CheckTraceHeaders(parent, state string) error {
	_, err := traceOf("", parent, state)
	return err
}

// chainTraced reports whether a chain names a trace context for a step.
func chainTraced(c *wire.ChainSpec) bool {
	if c == nil {
		return false
	}
	for i := range c.Steps {
		if c.Steps[i].TraceParent != "" {
			return true
		}
	}
	return c.OnFailure != nil && c.OnFailure.TraceParent != "" || c.OnExit != nil && c.OnExit.TraceParent != ""
}

// JobTrace is job id's queue and trace context as this node last applied
// them (all "" when it is not found), for the settle span of an ack or a
// fail, read before the job settles.
func (s *Service) JobTrace(ns, id string) (queue, parent, state string) {
	if jobIDOK(id) != nil {
		return "", "", ""
	}
	j, err := engine.ReadJob(s.node.DB(), ns, id)
	if err != nil {
		return "", "", ""
	}
	return j.Queue, j.TraceParent(), j.TraceState()
}

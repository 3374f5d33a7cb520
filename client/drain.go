package client

import (
	"errors"
	"net/http"

	"github.com/jobbie/jobbie/wire"
)

// ErrWorkerDraining is what Fetch and FetchBatch return once the worker
// was drained (DrainWorker, `jobbie workers drain`): it gets no more jobs.
// A Worker seeing it stops fetching, finishes the jobs it holds (within
// ShutdownGrace, as when its context is cancelled) and Run returns nil;
// a Worker on the worker stream does not see it yet.
var ErrWorkerDraining = errors.New("jobbie: the worker is draining: no more jobs")

// drainOf is ErrWorkerDraining when a fetch's answer says the worker was
// drained.
func drainOf(h http.Header) error {
	if h.Get(wire.WorkerDrainHeader) == "true" {
		return ErrWorkerDraining
	}
	return nil
}

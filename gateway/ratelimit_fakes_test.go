package gateway

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// fakePlans serves control's GET /internal/v1/tenants/{tid}/plan from
// memory: a tenant without a plan gets 404, as from control.
type fakePlans struct {
	mu      sync.Mutex
	plans   map[string]wire.TenantPlan
	down    bool
	gate    chan struct{} // when set, answers wait until it is closed
	fetches atomic.Int64
}

// servePlans adds the plan endpoint to fc's API.
func servePlans(t testing.TB, fc *fakeControl) *fakePlans {
	t.Helper()
	fp := &fakePlans{plans: map[string]wire.TenantPlan{}}
	fc.srv.Config.Handler.(*http.ServeMux).HandleFunc("GET /internal/v1/tenants/{tid}/plan", gatewayOnly(fp.serve))
	return fp
}

func (fp *fakePlans) serve(w http.ResponseWriter, r *http.Request) {
	fp.fetches.Add(1)
	fp.mu.Lock()
	gate := fp.gate
	fp.mu.Unlock()
	if gate != nil {
		<-gate
	}
	fp.mu.Lock()
	defer fp.mu.Unlock()
	tp, ok := fp.plans[r.PathValue("tid")]
	switch {
	case fp.down:
		writeErr(w, apierr.New(apierr.Unavailable, "down"))
	case !ok:
		writeErr(w, apierr.New(apierr.NotFound, "tenant has no plan"))
	default:
		writeJSON(w, http.StatusOK, tp)
	}
}

func (fp *fakePlans) set(tid string, tp wire.TenantPlan) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	tp.TenantID = tid
	fp.plans[tid] = tp
}

func (fp *fakePlans) setDown(down bool) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	fp.down = down
}

func (fp *fakePlans) setGate(gate chan struct{}) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	fp.gate = gate
}

// limited is a plan with these per-second limits; 0 leaves one out.
func limited(name string, rps, eps int64) wire.TenantPlan {
	p := wire.Plan{Name: name, Currency: "USD", Version: 1}
	if rps > 0 {
		p.Limits.RequestsPerSecond = &rps
	}
	if eps > 0 {
		p.Limits.EnqueuesPerSecond = &eps
	}
	return wire.TenantPlan{Plan: p}
}

package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/limits"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// scheduleShard makes a bundle's fake shard keep schedules per shard
// namespace as a shard does: a create adds one, a delete takes one away,
// GET /api/v1/namespace counts them.
type scheduleShard struct {
	mu      sync.Mutex
	n       map[string]int64 // shard namespace → schedules
	counted atomic.Int64     // GET /api/v1/namespace answered
	failing atomic.Bool      // counts answer 500
	created atomic.Int64
	hold    chan struct{} // when set, a create waits for it
}

func newScheduleShard(b *bundle) *scheduleShard {
	ss := &scheduleShard{n: map[string]int64{}}
	b.shard.setHandler(func(w http.ResponseWriter, r *http.Request) {
		ns := r.Header.Get(wire.ShardNamespaceHeader)
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/namespace":
			ss.counted.Add(1)
			if ss.failing.Load() {
				writeErr(w, apierr.New(apierr.Internal, "broken"))
				return
			}
			writeJSON(w, http.StatusOK, wire.NamespaceUsage{Schedules: ss.get(ns), Retention: json.RawMessage("null")})
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/schedules":
			if ss.hold != nil {
				<-ss.hold
			}
			ss.add(ns, 1)
			ss.created.Add(1)
			writeJSON(w, http.StatusCreated, wire.Schedule{ID: "sch_1", Name: "s"})
		case r.Method == http.MethodDelete && r.URL.Path == "/api/v1/namespace":
			ss.add(ns, -ss.get(ns))
			w.WriteHeader(http.StatusNoContent)
		case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/api/v1/schedules/"):
			ss.add(ns, -1)
			w.WriteHeader(http.StatusNoContent)
		default:
			writeJSON(w, http.StatusOK, map[string]any{})
		}
	})
	return ss
}

func (ss *scheduleShard) get(ns string) int64 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.n[ns]
}

func (ss *scheduleShard) add(ns string, d int64) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.n[ns] += d
}

var scheduleBody = map[string]any{"name": "nightly", "queue": "reports", "cron": "0 3 * * *"}

// The tenant's schedules in all its namespaces count: at the limit a
// create is a 429 quota_exceeded naming the limit and the plan, with
// Retry-After and the rate limit fields, and the shard never sees it;
// a delete lets the next one in. A replace (PUT) is no create.
func TestMaxSchedules(t *testing.T) {
	t.Parallel()
	b, fb := setupBilling(t)
	ss := newScheduleShard(b)
	fb.setTenantPlan(tenantA, wire.Plan{Name: "pro", Limits: wire.PlanLimits{MaxSchedules: i64p(3), RequestsPerSecond: i64p(10_000)}})
	ss.add(tenancy.ShardNamespace(tenantA, "emails"), 1)
	ss.add(tenancy.ShardNamespace(tenantB, "default"), 50) // another tenant's count nothing here
	dev := b.key(t, tenancy.RoleDeveloper, "default")      // a key of one namespace: the tenant's limit still holds

	for range 2 {
		r := b.do(t, http.MethodPost, "/api/v1/schedules", dev, scheduleBody)
		require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	}
	require.Equal(t, int64(2), ss.get(tenancy.ShardNamespace(tenantA, "default")))

	r := b.do(t, http.MethodPost, "/api/v1/schedules", dev, scheduleBody)
	e := r.requireError(t, http.StatusTooManyRequests, apierr.QuotaExceeded)
	require.Contains(t, e.Message, "max_schedules limit of 3")
	require.Contains(t, e.Message, `"pro"`)
	require.Equal(t, "5", r.header.Get("Retry-After"))
	require.Contains(t, r.header.Get(wire.RateLimitPolicyHeader), `"rps";q=10000`)
	require.NotEmpty(t, r.header.Get(wire.RateLimitHeader))
	require.Equal(t, int64(2), ss.created.Load(), "the refused create never reached the shard")

	// A refused create again costs no count while the refusal is fresh.
	counted := ss.counted.Load()
	b.do(t, http.MethodPost, "/api/v1/schedules", dev, scheduleBody).requireError(t, http.StatusTooManyRequests, apierr.QuotaExceeded)
	require.Equal(t, counted, ss.counted.Load())

	// Replacing one is no create.
	r = b.do(t, http.MethodPut, "/api/v1/schedules/nightly", dev, scheduleBody)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)

	// A delete through this gateway lets the next create in at once.
	r = b.do(t, http.MethodDelete, "/api/v1/schedules/nightly", dev, nil)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)
	r = b.do(t, http.MethodPost, "/api/v1/schedules", dev, scheduleBody)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	b.do(t, http.MethodPost, "/api/v1/schedules", dev, scheduleBody).requireError(t, http.StatusTooManyRequests, apierr.QuotaExceeded)

	// A namespace deleted takes its schedules with it, and drops the count.
	r = b.do(t, http.MethodDelete, "/api/v1/namespaces/emails?force=true", b.key(t, tenancy.RoleOwner, "*"), nil)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)
	r = b.do(t, http.MethodPost, "/api/v1/schedules", dev, scheduleBody)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)

	// Tenant B's plan has no such limit: it is never counted.
	counted = ss.counted.Load()
	keyB := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleDeveloper, "default"))
	r = b.do(t, http.MethodPost, "/api/v1/schedules", keyB, scheduleBody)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
	require.Equal(t, counted, ss.counted.Load())
}

// A schedule deleted through another gateway is seen once the refusing
// count runs out.
func TestMaxSchedulesCountRunsOut(t *testing.T) {
	t.Parallel()
	clk := clockwork.NewFakeClockAt(quotaNow)
	b, fb := setupBilling(t, func(c *Config) { c.Clock = clk })
	ss := newScheduleShard(b)
	fb.setTenantPlan(tenantA, wire.Plan{Name: "pro", Limits: wire.PlanLimits{MaxSchedules: i64p(1)}})
	ns := tenancy.ShardNamespace(tenantA, "default")
	ss.add(ns, 1)
	dev := b.key(t, tenancy.RoleDeveloper, "default")
	b.do(t, http.MethodPost, "/api/v1/schedules", dev, scheduleBody).requireError(t, http.StatusTooManyRequests, apierr.QuotaExceeded)

	ss.add(ns, -1) // deleted elsewhere
	b.do(t, http.MethodPost, "/api/v1/schedules", dev, scheduleBody).requireError(t, http.StatusTooManyRequests, apierr.QuotaExceeded)
	clk.Advance(limits.ScheduleCountTTL)
	r := b.do(t, http.MethodPost, "/api/v1/schedules", dev, scheduleBody)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
}

// Creates racing through one gateway pass one at a time: never past the
// limit.
func TestMaxSchedulesConcurrentCreates(t *testing.T) {
	t.Parallel()
	b, fb := setupBilling(t)
	ss := newScheduleShard(b)
	ss.hold = make(chan struct{})
	fb.setTenantPlan(tenantA, wire.Plan{Name: "pro", Limits: wire.PlanLimits{MaxSchedules: i64p(3)}})
	dev := b.key(t, tenancy.RoleDeveloper, "*")
	const n = 12
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		ns := []string{"default", "emails"}[i%2]
		wg.Go(func() {
			statuses <- b.do(t, http.MethodPost, "/api/v1/schedules", dev, scheduleBody, wire.NamespaceHeader, ns).status
		})
	}
	stop := make(chan struct{})
	go func() { // let the creates through one by one, as a slow shard would
		for {
			time.Sleep(time.Millisecond)
			select {
			case ss.hold <- struct{}{}:
			case <-stop:
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	close(statuses)
	got := map[int]int{}
	for s := range statuses {
		got[s]++
	}
	require.Equal(t, map[int]int{http.StatusCreated: 3, http.StatusTooManyRequests: n - 3}, got)
	require.Equal(t, int64(3), ss.created.Load())
}

// A tenant that cannot be counted is not admitted unchecked.
func TestMaxSchedulesUncountable(t *testing.T) {
	t.Parallel()
	b, fb := setupBilling(t)
	ss := newScheduleShard(b)
	fb.setTenantPlan(tenantA, wire.Plan{Name: "pro", Limits: wire.PlanLimits{MaxSchedules: i64p(3)}})
	ss.failing.Store(true)
	dev := b.key(t, tenancy.RoleDeveloper, "default")
	r := b.do(t, http.MethodPost, "/api/v1/schedules", dev, scheduleBody)
	r.requireError(t, http.StatusServiceUnavailable, apierr.Unavailable)
	require.NotEmpty(t, r.header.Get("Retry-After"))
	require.Zero(t, ss.created.Load())
	ss.failing.Store(false)
	r = b.do(t, http.MethodPost, "/api/v1/schedules", dev, scheduleBody)
	require.Equal(t, http.StatusCreated, r.status, "body: %s", r.body)
}

// A restore under max_schedules tells control the room the plan leaves
// (the limit less the tenant's schedules on its shards; a replace's own
// namespace's do not count, they go), for control to refuse a backup
// that holds more; a client cannot send that room itself, and a tenant
// whose plan has no limit sends none.
func TestMaxSchedulesRoomOfARestore(t *testing.T) {
	t.Parallel()
	b, fb := setupBilling(t)
	ss := newScheduleShard(b)
	fb.setTenantPlan(tenantA, wire.Plan{Name: "pro", Limits: wire.PlanLimits{MaxSchedules: i64p(5), RequestsPerSecond: i64p(10_000)}})
	ss.add(tenancy.ShardNamespace(tenantA, "emails"), 1)
	ss.add(tenancy.ShardNamespace(tenantA, "default"), 2)
	owner := b.key(t, tenancy.RoleOwner, "*")
	id := b.control.AddBackup(tenantA, "emails")

	r := b.do(t, http.MethodPost, "/api/v1/backups/"+id+"/restore", owner, map[string]any{"target_namespace": "copy"})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	r = b.do(t, http.MethodPost, "/api/v1/backups/"+id+"/restore", owner, map[string]any{"replace": true})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	b.do(t, http.MethodPost, "/api/v1/backups/"+id+"/restore", owner, map[string]any{"target_namespace": "x", "schedule_room": 100}).
		requireError(t, http.StatusBadRequest, apierr.BadRequest)
	got := b.control.BackupState().Restores
	require.Len(t, got, 2)
	require.NotNil(t, got[0].ScheduleRoom)
	require.Equal(t, int64(2), *got[0].ScheduleRoom, "5 less the 3 the tenant has")
	require.NotNil(t, got[1].ScheduleRoom)
	require.Equal(t, int64(3), *got[1].ScheduleRoom, "emails' own schedule is replaced")

	keyB := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "*"))
	idB := b.control.AddBackup(tenantB, "default")
	r = b.do(t, http.MethodPost, "/api/v1/backups/"+idB+"/restore", keyB, map[string]any{"target_namespace": "copy"})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	got = b.control.BackupState().Restores
	require.Nil(t, got[len(got)-1].ScheduleRoom, "no plan limit, no room")
}

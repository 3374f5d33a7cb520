package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
)

// The checks a path implies are on the rows whose paths imply them.
func TestRouteTableChecks(t *testing.T) {
	t.Parallel()
	for _, rt := range routeTable {
		what := rt.method + " " + rt.path
		require.Equal(t, strings.HasPrefix(rt.path, "/api/v1/queues/:name"), rt.checks&queueNamed != 0, "a custom role is checked on the queue a path names: %s", what)
		require.Equal(t, rt.checks&scoped != 0, rt.checks&local != 0, "a local API serves the shard's endpoints, no more: %s", what)
		require.Equal(t, rt.path == "/api/v1/enqueue", rt.checks&enqueueOne != 0, what)
		require.Equal(t, rt.path == "/api/v1/enqueue/batch", rt.checks&enqueueBatch != 0, what)
		require.Equal(t, strings.HasPrefix(rt.path, "/api/v1/fetch"), rt.checks&(executionCap|longPollCap) == executionCap|longPollCap, what)
		if rt.checks&(createsJobs|scheduleQuota|scheduleForget|batchBody) != 0 {
			require.NotZero(t, rt.checks&scoped, "only the shard's endpoints create jobs or schedules: %s", what)
		}
	}
}

// A path of the route table asked with a method none of its rows has is
// 405, with Allow naming the methods the path has,
// before any key is asked for; on a self-hosted node's local API too.
func TestWrongMethodIs405WithAllow(t *testing.T) {
	t.Parallel()
	hosted := setup(t)
	local, _ := startLocal(t, &localNode{}, time.Minute)
	for _, b := range []*bundle{hosted, local} {
		r := b.do(t, http.MethodGet, "/api/v1/enqueue", "", nil)
		r.requireError(t, http.StatusMethodNotAllowed, apierr.MethodNotAllowed)
		require.Equal(t, "POST", r.header.Get("Allow"))
		for _, path := range concretePaths() {
			has := methodsOf(path)
			for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
				if has[m] {
					continue
				}
				r := b.do(t, m, path, "", nil)
				r.requireError(t, http.StatusMethodNotAllowed, apierr.MethodNotAllowed)
				allow := map[string]bool{}
				for _, a := range strings.Split(r.header.Get("Allow"), ",") {
					allow[strings.TrimSpace(a)] = true
				}
				require.Equal(t, has, allow, "%s %s", m, path)
			}
		}
		b.do(t, http.MethodGet, "/api/v1/nowhere", "", nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	}
}

// concretePaths is each path of the route table with its parameters
// filled in.
func concretePaths() []string {
	var out []string
	seen := map[string]bool{}
	for _, rt := range routeTable {
		p := fillParams(rt.path)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

func fillParams(pattern string) string {
	parts := strings.Split(pattern, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, ":") {
			parts[i] = "x1"
		}
	}
	return strings.Join(parts, "/")
}

// methodsOf is every method of the rows whose pattern matches path.
func methodsOf(path string) map[string]bool {
	out := map[string]bool{}
	segs := strings.Split(path, "/")
	for _, rt := range routeTable {
		pat := strings.Split(rt.path, "/")
		if len(pat) != len(segs) {
			continue
		}
		match := true
		for i := range pat {
			if !strings.HasPrefix(pat[i], ":") && pat[i] != segs[i] {
				match = false
			}
		}
		if match {
			out[rt.method] = true
		}
	}
	return out
}

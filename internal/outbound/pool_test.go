package outbound

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// A tenant with as many calls in flight as its bound, round after round,
// to one target reuses its connections: the pool keeps as many idle as
// the tenant may use, so no call pays for a new TLS handshake after the
// first round.
func TestATenantAtItsBoundKeepsItsConnections(t *testing.T) {
	t.Parallel()
	const bound, rounds = 32, 6
	var (
		mu      sync.Mutex
		seen    = map[string]int{}
		byRound = map[string]chan struct{}{}
	)
	gate := func(round string) chan struct{} {
		if byRound[round] == nil {
			byRound[round] = make(chan struct{})
		}
		return byRound[round]
	}
	// Every round's calls are all in flight at once: each waits for the
	// round's last to arrive.
	r := newReceiver(t, func(w http.ResponseWriter, req *http.Request) {
		round := req.Header.Get("X-Round")
		mu.Lock()
		seen[round]++
		g := gate(round)
		if seen[round] == bound {
			close(g)
		}
		mu.Unlock()
		<-g
	})
	c := newClient(t, nil, r)
	require.Equal(t, bound, c.cfg.PerTenant, "the default bound")
	for i := range rounds {
		var wg sync.WaitGroup
		for range bound {
			wg.Go(func() {
				if _, err := c.Do(t.Context(), Request{Tenant: "t1", URL: r.URL, Header: http.Header{"X-Round": {fmt.Sprint(i)}}}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	require.EqualValues(t, bound*rounds, r.hits.Load())
	require.EqualValues(t, bound, r.conns.Load(), "connections made over %d rounds of %d calls at once", rounds, bound)
}

package proxy

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/internal/controlfake"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/internal/shardclient"
)

const tenantA = "t_01hx7y2k3m0000000000000000"

// newProxy is a proxy whose placement cache holds size placements, in
// front of a fake control that places tenant A's "emails" on shard s1.
func newProxy(t *testing.T, size int) (*controlfake.Control, *Proxy) {
	t.Helper()
	fc := controlfake.New(controlfake.NewSigner("sig-1"))
	fc.AddNamespace(tenantA, "emails", "s1", "127.0.0.1:1")
	shards := shardclient.New(shardclient.Config{TLS: pkitest.New(t).Creds(t, pkitest.Gateway)})
	t.Cleanup(shards.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p, err := New(ctx, Config{Control: fc, Shards: shards, Clock: clockwork.NewRealClock(), Logger: slog.New(slog.DiscardHandler),
		PlacementTTL: 30 * time.Second, PlacementMissTTL: time.Second, PlacementCacheSize: size, ShardTimeout: time.Second})
	require.NoError(t, err)
	return fc, p
}

func TestPlacementMissesShareOneControlCall(t *testing.T) {
	t.Parallel()
	fc, p := newProxy(t, 100_000)
	const n = 8
	var started sync.WaitGroup
	started.Add(n)
	got := make(chan *placement, n)
	fc.Lock() // control answers no one until every lookup is under way
	for range n {
		go func() {
			started.Done()
			p, err := p.placements.lookup(tenantA, "emails", "")
			if err != nil {
				p = nil
			}
			got <- p
		}()
	}
	started.Wait()
	fc.Unlock()
	first := <-got
	require.NotNil(t, first)
	for range n - 1 {
		require.Same(t, first, <-got)
	}
	require.Equal(t, int64(1), fc.PlacementCalls.Load())
}

// The placements are a bounded LRU cache of PlacementCacheSize.
func TestCachesAreBoundedLRU(t *testing.T) {
	t.Parallel()
	_, p := newProxy(t, 16)
	places := p.placements.cache
	for i := range 1000 {
		places.Add(placementKey{tenant: tenantA, ns: strconv.Itoa(i)}, &placement{})
		require.LessOrEqual(t, places.Len(), 16)
	}
	require.True(t, places.Contains(placementKey{tenant: tenantA, ns: "999"}))
}

package leader

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"
	"golang.org/x/sync/errgroup"

	"github.com/jobbie/jobbie/control/service"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// The usage puller: on the leader, every PullInterval, it reads each
// shard's hourly buckets since the shard's cursor (GET
// /internal/v1/usage, paged) and stores them in the ledger. A bucket's
// hour is closed for a shard once the shard's applied_at is more than an
// hour and closeMargin past the hour's start; the cursor then moves to the
// oldest hour still open. The cursor is replicated and a bucket is stored
// as the absolute counters the shard gave, so a leader change or a
// restart re-reads at most the open hours, and re-reading changes nothing.

const (
	// CloseMargin allows for clock skew between a shard's successive
	// leaders, which stamp the times its commands are applied at.
	CloseMargin = time.Minute
	// pullPageLimit is the page size asked of a shard.
	pullPageLimit = 1000
	// pullBatch is how many buckets one put_usage command carries.
	pullBatch = 500
	// maxPullBody bounds one page's answer.
	maxPullBody = 64 << 20
	// pullParallel is how many shards are read at once.
	pullParallel = 8
	// PullMaxBack is how far back a pull may start: shards keep 40 days
	// of hours and refuse a since before that (400), so a shard never
	// read, or not reachable for weeks, is read from here, two days of
	// clock skew inside what it keeps.
	PullMaxBack = 38 * 24 * time.Hour
)

// usagePath is a shard's usage endpoint.
const usagePath = "/internal/v1/usage"

// Target is a shard and where its nodes are: registered members (who
// registered over mutual TLS) and configured addresses, never gossip's.
type Target struct {
	ID    string
	Addrs []string // https base URLs
}

// puller is the pull loop and what it remembers between rounds; the
// cursor itself is in the replicated state.
type puller struct {
	s *Leader

	mu      sync.Mutex
	failing map[string]bool // shard id → its last pull failed (logged once)
}

func newPuller(s *Leader) *puller {
	return &puller{s: s, failing: map[string]bool{}}
}

// run pulls every interval until ctx ends, while this node leads.
func (p *puller) run(ctx context.Context, interval time.Duration, after func()) {
	// Real time, not Config.Clock: the interval paces network calls, and
	// what closes an hour is the shard's applied_at, not this clock.
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if p.s.IsLeader() {
			p.pullAll(ctx)
			p.s.FreezeInvoices(ctx) // a pull is what closes a month
		}
		if after != nil {
			after()
		}
	}
}

// pullAll reads every shard once; a shard that fails is logged (once
// until it recovers) and tried again next round.
func (p *puller) pullAll(ctx context.Context) {
	targets, err := service.ViewValue(p.s.Service, p.s.Targets)
	if err != nil {
		p.s.log.Warn("control: usage pull: list shards", "err", err)
		return
	}
	var g errgroup.Group
	g.SetLimit(pullParallel)
	for _, tg := range targets {
		g.Go(func() error {
			if err := p.pullShard(ctx, tg); ctx.Err() == nil {
				p.noteOutcome(tg.ID, err) // not a stop's cancelled calls
			}
			return nil
		})
	}
	_ = g.Wait()
}

func (p *puller) noteOutcome(id string, err error) {
	p.mu.Lock()
	was := p.failing[id]
	p.failing[id] = err != nil
	p.mu.Unlock()
	switch {
	case err != nil && !was:
		p.s.log.Warn("control: usage pull failed; retrying every interval", "shard", id, "err", err)
	case err == nil && was:
		p.s.log.Info("control: usage pull works again", "shard", id)
	}
}

// Targets lists every shard with an address control may dial.
func (s *Leader) Targets(r pebble.Reader) ([]Target, error) {
	reg, err := state.ListRegisteredShards(r)
	if err != nil {
		return nil, err
	}
	byID := map[string]*Target{}
	var order []string
	add := func(id, addr string) {
		u, ok := ShardURL(addr)
		if !ok {
			return
		}
		tg := byID[id]
		if tg == nil {
			tg = &Target{ID: id}
			byID[id] = tg
			order = append(order, id)
		}
		for _, a := range tg.Addrs {
			if a == u {
				return
			}
		}
		tg.Addrs = append(tg.Addrs, u)
	}
	for _, sh := range s.cfg.Shards {
		add(sh.ID, sh.Addr)
		for _, a := range sh.UsageAddrs {
			add(sh.ID, a)
		}
	}
	for _, rs := range reg {
		for _, m := range rs.Members {
			add(rs.ID, m.HTTPAddr)
		}
	}
	out := make([]Target, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out, nil
}

// ShardURL is the https base URL of a shard address (host:port or an
// http(s) URL: every hop is mutual TLS whatever the scheme says); a Unix
// socket is for a gateway on the same host, not for control.
func ShardURL(addr string) (string, bool) {
	if strings.HasPrefix(addr, "unix:") {
		return "", false
	}
	host := addr
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", false
		}
		host = u.Host
		if u.Port() == "" {
			// The scheme's port, spoken in TLS as every hop is.
			host = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
		}
	}
	h, port, err := net.SplitHostPort(host)
	if err != nil || h == "" {
		return "", false
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", false
	}
	return "https://" + host, true
}

// pullShard reads shard tg from its cursor, at the node of its route
// (shards.go): a page that finds a node gone is read again from another.
func (p *puller) pullShard(ctx context.Context, tg Target) error {
	cur, err := service.ViewValue(p.s.Service, func(r pebble.Reader) (state.PullCursor, error) {
		c, _, err := state.LoadPullCursor(r, tg.ID)
		return c, err
	})
	if err != nil {
		return err
	}
	since := cur.Hour
	if oldest := p.s.cfg.Clock.Now().UTC().Add(-PullMaxBack).Truncate(time.Hour); since.Before(oldest) {
		since = oldest
	}
	return p.pullFrom(ctx, tg, since, cur.Hour)
}

// pullFrom pages through one node's buckets since since and stores them;
// the last command moves the cursor past the hours the node's applied_at
// closed (never before cursor, where it stands).
func (p *puller) pullFrom(ctx context.Context, tg Target, since, cursor time.Time) error {
	shard := tg.ID
	var (
		applied time.Time // the earliest applied_at of the pages: every page is at least that current
		batch   []state.UsageEntry
		page    string
	)
	for {
		up, err := p.fetch(ctx, tg, since, page)
		if err != nil {
			return err
		}
		if up.ShardID != shard {
			return fmt.Errorf("the node answered for shard %q", up.ShardID)
		}
		if applied.IsZero() || up.AppliedAt.Before(applied) {
			applied = up.AppliedAt
		}
		for _, b := range up.Buckets {
			e, err := entryOf(b)
			if err != nil {
				p.s.log.Warn("control: usage pull: skipped a bucket", "shard", shard, "err", err)
				continue
			}
			batch = append(batch, e)
			if len(batch) == pullBatch {
				if err := p.s.PutUsage(ctx, shard, batch, time.Time{}, time.Time{}); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		if up.Cursor == nil {
			break
		}
		if *up.Cursor == "" || *up.Cursor == page {
			return fmt.Errorf("the node repeated page cursor %q", page)
		}
		page = *up.Cursor
	}
	next := time.Time{}
	if open := oldestOpenHour(applied); !applied.IsZero() && open.After(cursor) {
		next = open
	}
	return p.s.PutUsage(ctx, shard, batch, next, applied)
}

// oldestOpenHour is the first hour a shard whose applied_at is applied
// may still count into: an hour H is closed once applied > H + 1h +
// CloseMargin.
func oldestOpenHour(applied time.Time) time.Time {
	t := applied.UTC().Add(-time.Hour - CloseMargin)
	h := t.Truncate(time.Hour)
	if h.Before(t) {
		h = h.Add(time.Hour)
	}
	return h
}

// entryOf checks a shard's bucket and turns it into a ledger entry.
func entryOf(b wire.UsageBucket) (state.UsageEntry, error) {
	tid, ns, err := tenancy.ParseShardNamespace(b.Namespace)
	if err != nil {
		return state.UsageEntry{}, err
	}
	if !b.Hour.Equal(b.Hour.Truncate(time.Hour)) {
		return state.UsageEntry{}, fmt.Errorf("bucket of %s: hour %s is not the start of an hour", b.Namespace, b.Hour)
	}
	m := b.Meters
	for _, v := range []int64{m.JobsEnqueued, m.Executions, m.JobsCompleted, m.JobsFailed, m.JobsDead, m.ActiveJobMs, m.StorageByteMs} {
		if v < 0 {
			return state.UsageEntry{}, fmt.Errorf("bucket of %s at %s has a negative meter", b.Namespace, b.Hour)
		}
	}
	return state.UsageEntry{Tenant: tid, Namespace: ns, Hour: b.Hour.Unix(), Meters: m}, nil
}

// fetch asks the shard for one page.
func (p *puller) fetch(ctx context.Context, tg Target, since time.Time, page string) (wire.UsagePage, error) {
	q := url.Values{"since": {since.UTC().Format(time.RFC3339)}, "limit": {strconv.Itoa(pullPageLimit)}}
	if page != "" {
		q.Set("cursor", page)
	}
	ctx, cancel := context.WithTimeout(ctx, p.s.cfg.PullTimeout)
	defer cancel()
	resp, err := p.s.shards.send(ctx, tg, shardclient.Request{Method: http.MethodGet, Path: usagePath + "?" + q.Encode()})
	if err != nil {
		return wire.UsagePage{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPullBody))
	if err != nil {
		return wire.UsagePage{}, err
	}
	var up wire.UsagePage
	if err := json.Unmarshal(body, &up); err != nil {
		return wire.UsagePage{}, fmt.Errorf("undecodable answer: %w", err)
	}
	return up, nil
}

// target is shard's Target: where control may reach its nodes.
func (s *Leader) target(shard, ns string) (Target, error) {
	targets, err := service.ViewValue(s.Service, s.Targets)
	if err != nil {
		return Target{}, err
	}
	for _, tg := range targets {
		if tg.ID == shard && len(tg.Addrs) > 0 {
			return tg, nil
		}
	}
	return Target{}, fmt.Errorf("shard %s of namespace %q has no address control can reach", shard, ns)
}

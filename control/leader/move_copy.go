package leader

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// transfer streams the source's snapshot or delta into the target's
// apply, adds what was sent to m, and returns the records it held.
func (r *moveRunner) transfer(ctx context.Context, m *state.MoveRecord, what string) (int64, error) {
	res, sent, err := r.copyStream(ctx, *m, what)
	if err != nil {
		return 0, fmt.Errorf("copy the %s of source shard %s to target shard %s: %w", what, m.FromShard, m.ToShard, err)
	}
	n := res.Records + res.Deletes
	m.Records += n
	m.Bytes += sent
	return n, nil
}

// copyStream reads the source's stream and posts it to the target's
// apply, at the node that answered begin (the route's current node):
// once, since the stream cannot be read again, so another node's 503
// fails the copy.
func (r *moveRunner) copyStream(ctx context.Context, m state.MoveRecord, what string) (moveApplied, int64, error) {
	var res moveApplied
	from, err := r.s.target(m.FromShard, m.Namespace)
	if err != nil {
		return res, 0, err
	}
	to, err := r.s.target(m.ToShard, m.Namespace)
	if err != nil {
		return res, 0, err
	}
	src, err := r.s.shards.send(ctx, from, shardclient.Request{Method: http.MethodGet, Path: movePath + what, Header: moveHeader(m)})
	if err != nil {
		return res, 0, err
	}
	defer src.Body.Close()
	body := &countingReader{r: src.Body}
	h := moveHeader(m)
	h.Set("Content-Type", wire.BackupContentType)
	resp, err := r.s.shards.send(ctx, to, shardclient.Request{Method: http.MethodPost, Path: movePath + "apply", Header: h, Body: once(body)})
	if err != nil {
		return res, body.n, fmt.Errorf("apply on target: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxShardError))
	if err != nil {
		return res, body.n, err
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, body.n, fmt.Errorf("apply on target: undecodable answer: %w", err)
	}
	return res, body.n, nil
}

// moveApplied is a target's answer to apply.
type moveApplied struct {
	Records int64 `json:"records"`
	Deletes int64 `json:"deletes"`
	Bytes   int64 `json:"bytes"`
}

// moveHeader names m's namespace on the shard and m's token.
func moveHeader(m state.MoveRecord) http.Header {
	h := http.Header{}
	h.Set(wire.ShardNamespaceHeader, tenancy.ShardNamespace(m.TenantID, m.Namespace))
	h.Set(wire.MoveTokenHeader, m.ID)
	return h
}

// call posts a small JSON body (nil: none) to shard's move route step,
// on its leader.
func (r *moveRunner) call(ctx context.Context, m state.MoveRecord, shard, step string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, moveCallTimeout)
	defer cancel()
	tg, err := r.s.target(shard, m.Namespace)
	if err != nil {
		return err
	}
	return r.s.shards.call(ctx, tg, http.MethodPost, movePath+step, moveHeader(m), in, out)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

package client

import (
	"context"
	"net/url"

	"github.com/jobbie/jobbie/wire"
)

// Live namespace moves, on the control plane (operator only): a namespace
// is copied to another shard while it serves, then its placement switches.

// Move is a live namespace move and how far it got.
type Move = wire.Move

// States of a Move.
const (
	MoveCopying    = wire.MoveCopying
	MoveCatchingUp = wire.MoveCatchingUp
	MoveFenced     = wire.MoveFenced
	MoveSwitched   = wire.MoveSwitched
	MoveCompleted  = wire.MoveCompleted
	MoveCancelled  = wire.MoveCancelled
	MoveFailed     = wire.MoveFailed
)

// MoveQuery narrows ListMoves; an empty field matches every move.
type MoveQuery struct {
	Tenant    string // the namespace's tenant id
	Namespace string
	State     string
}

func movePath(id string) string { return "/control/v1/moves/" + url.PathEscape(id) }

// MoveNamespace starts moving tenant tenantID's namespace ns to shard
// toShard. Self-hosted shards cannot take part.
func (c *Client) MoveNamespace(ctx context.Context, tenantID, ns, toShard string) (*Move, error) {
	path := "/control/v1/namespaces/" + url.PathEscape(tenantID) + "/" + url.PathEscape(ns) + "/move"
	return c.moveCall(ctx, "POST", path, wire.NamespaceMoveRequest{ToShard: toShard})
}

// GetMove is move id as it stands.
func (c *Client) GetMove(ctx context.Context, id string) (*Move, error) {
	return c.moveCall(ctx, "GET", movePath(id), nil)
}

// CancelMove cancels move id before it switches: the target's copy is
// removed and the namespace stays where it was. A move that has ended is
// answered as it ended.
func (c *Client) CancelMove(ctx context.Context, id string) (*Move, error) {
	return c.moveCall(ctx, "POST", movePath(id)+"/cancel", nil)
}

// ListMoves lists the moves q matches, newest first.
func (c *Client) ListMoves(ctx context.Context, q MoveQuery) ([]Move, error) {
	v := url.Values{}
	for k, s := range map[string]string{"tenant": q.Tenant, "namespace": q.Namespace, "state": q.State} {
		if s != "" {
			v.Set(k, s)
		}
	}
	var out wire.MoveList
	if _, err := c.do(ctx, "GET", "/control/v1/moves?"+v.Encode(), nil, &out); err != nil {
		return nil, err
	}
	return out.Moves, nil
}

func (c *Client) moveCall(ctx context.Context, method, path string, in any) (*Move, error) {
	var out Move
	if _, err := c.do(ctx, method, path, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

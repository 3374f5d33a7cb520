package shard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// Register records this shard cluster with the control plane at
// controlURL (POST /control/v1/shards/register, docs/internal-api.md): its
// members whose HTTP address is known, capacity and version. It sends
// nothing when the record would equal last (the value a previous call
// returned) and returns the record sent, or last.
//
// The node presents its shard certificate and sends only to a server
// whose certificate is control's.
func (n *Node) Register(ctx context.Context, controlURL string, capacity uint64, last string) (string, error) {
	ms, err := n.Members()
	if err != nil {
		return last, err
	}
	r := wire.ShardRegistration{ShardID: n.cfg.ShardID, Capacity: capacity, Version: n.cfg.Version}
	for _, m := range ms {
		if m.HTTPAddr != "" {
			r.Members = append(r.Members, wire.ShardMember{NodeID: m.ID, HTTPAddr: m.HTTPAddr, RaftAddr: m.Addr})
		}
	}
	body, _ := json.Marshal(r)
	if string(body) == last {
		return last, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	url := strings.TrimSuffix(controlURL, "/") + "/control/v1/shards/register"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return last, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := n.control.Do(req)
	if err != nil {
		return last, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		return last, fmt.Errorf("control answered %d: %s", res.StatusCode, bytes.TrimSpace(msg))
	}
	return string(body), nil
}

package leader

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/jobbie/jobbie/internal/shardclient"
	"github.com/jobbie/jobbie/wire"
)

// How the runners reach shards: through internal/shardclient alone, with
// control's certificate; a shard's route admits only nodes whose
// certificates show membership of that shard, so an address that is not
// one of its nodes gets nothing. Routes are built from Targets
// (registered members and configured addresses, never gossip's), and
// requests go to the node that answered last. shardclient's rule holds:
// a request is sent again only when it certainly was not applied (a
// not-the-leader answer, a connection never made), or when it is a read.

const (
	// shardRetry bounds how long a request is retried while its shard
	// elects a leader; the runners retry past it on their own terms.
	shardRetry = 2 * time.Second
	// maxShardError bounds a shard's error answer read.
	maxShardError = 64 << 10
)

// shards is the runners' client of shard clusters.
type shards struct {
	c *shardclient.Client
}

func newShards(cfg Config) *shards {
	return &shards{c: shardclient.New(shardclient.Config{TLS: cfg.TLS, Name: "jobbie-control", Logger: cfg.Logger,
		RetryTimeout: shardRetry, NoLink: true})}
}

// close ends the waits of requests being retried and drops idle
// connections, once nothing calls shards any more.
func (sh *shards) close() { sh.c.Close() }

// route is tg's route, its addresses replaced by tg's.
func (sh *shards) route(tg Target) (*shardclient.Route, error) {
	if len(tg.Addrs) == 0 {
		return nil, fmt.Errorf("shard %s has no address control can reach", tg.ID)
	}
	return sh.c.Route(tg.ID, tg.Addrs[0], tg.Addrs[1:])
}

// send sends r to tg's leader and returns its answer, streamed, when it
// is a 200; any other answer is an error naming the shard and its message.
func (sh *shards) send(ctx context.Context, tg Target, r shardclient.Request) (*http.Response, error) {
	rt, err := sh.route(tg)
	if err != nil {
		return nil, err
	}
	r.MaxErrorBody = maxShardError
	r.KeepAlive = true // as a shard expects of a move: a delta on the connection its snapshot came on
	st, err := sh.c.Send(ctx, rt, r)
	if err != nil {
		return nil, err
	}
	if st.Resp.StatusCode == http.StatusOK {
		return st.Resp, nil
	}
	body := st.Body
	if body == nil {
		body, _ = io.ReadAll(io.LimitReader(st.Resp.Body, maxShardError))
	}
	st.Close()
	return nil, fmt.Errorf("shard %s answered %d: %s", tg.ID, st.Resp.StatusCode, shardMessage(body))
}

// call sends a request with a small JSON body (nil: none) and decodes a
// 200's JSON answer into out (nil: discarded).
func (sh *shards) call(ctx context.Context, tg Target, method, path string, header http.Header, in, out any) error {
	r := shardclient.Request{Method: method, Path: path, Header: header.Clone()}
	if r.Header == nil {
		r.Header = http.Header{}
	}
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		r.Header.Set("Content-Type", "application/json")
		r.Body = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
	}
	resp, err := sh.send(ctx, tg, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxShardError))
		return nil
	}
	return json.NewDecoder(io.LimitReader(resp.Body, maxShardError)).Decode(out)
}

// once is a body that can be sent once: a stream read as it is sent
// cannot be opened again, so a request that would need it again fails.
func once(body io.Reader) func() (io.ReadCloser, error) {
	used := false
	return func() (io.ReadCloser, error) {
		if used {
			return nil, errStreamSent
		}
		used = true
		return io.NopCloser(body), nil
	}
}

// errStreamSent ends a request whose streamed body was sent already.
var errStreamSent = errors.New("the stream was sent once and cannot be sent again")

// shardMessage is the message of a shard's error answer, else its start.
func shardMessage(body []byte) string {
	var e wire.ErrorBody
	if json.Unmarshal(body, &e) == nil && e.Error != nil {
		return e.Error.Message
	}
	return fmt.Sprintf("%.200s", body)
}

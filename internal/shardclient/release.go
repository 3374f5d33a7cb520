package shardclient

import (
	"encoding/json"
	"net"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/internal/conncheck"
	"github.com/jobbie/jobbie/wire"
)

// A fetch's jobs are leased on the shard before its answer travels back.
// A hop that carried the fetch (a gateway, or a follower forwarding to its
// leader) keeps its own connection to the shard open when the worker's
// closes (a worker restarted mid-poll, a client timeout), so that hop is
// the one that can tell the worker is gone: it then gives the leases back
// (POST /api/v1/release, for this worker_id, these attempts and the
// answer's lease tokens, so a late release cannot take back a later lease
// of the same attempt) instead of leaving them to run out.

// ReleaseTimeout bounds the release of a gone worker's leases.
const ReleaseTimeout = 5 * time.Second

// GoneWorker returns the leases a fetch's answer handed to a worker whose
// connection (worker) has closed, and false when there is nothing to give
// back: path is not a fetch, the answer is not a 200 with jobs, or the
// worker is still there. fetch and answer are the fetch's request and
// answer bodies. The cheap checks come first: every forwarded answer
// passes here.
func GoneWorker(worker net.Conn, path string, status int, fetch, answer []byte) (*wire.ReleaseRequest, bool) {
	if status != fasthttp.StatusOK || !strings.HasPrefix(path, "/api/v1/fetch") || !conncheck.Gone(worker) {
		return nil, false
	}
	return wire.FetchedLeases(path == "/api/v1/fetch/batch", fetch, answer)
}

// SetRelease makes req the release of rel: its method, path, content
// type and body. The caller adds the headers of its hop (the namespace,
// the request id) and sends it.
func SetRelease(req *fasthttp.Request, rel *wire.ReleaseRequest) error {
	body, err := json.Marshal(rel)
	if err != nil {
		return err
	}
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI("/api/v1/release")
	req.Header.SetContentType("application/json")
	req.SetBodyRaw(body)
	return nil
}

package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// A self-hosted shard node's local API is a gateway in the node's process
// (Config.Local) that serves the tenant's workers in the customer's
// network, also while the hosted service is unreachable. It is this
// package's gateway with one difference: what it would ask control, it
// reads from the trust bundle the hosted gateways push to the node
// (wire.TrustBundle). So keys, revocations, rotated secrets, retiring
// signing keys, custom roles and RBAC are judged by the very code the
// hosted gateway runs, and only the tenant's own namespaces on this
// shard are served, over the node's Unix socket.
//
// The bundle stands in for control's revocation list: the list counts as
// fresh from when the bundle arrived, so once no bundle has come for
// Config.RevocationMaxAge (the hosted service unreachable that long)
// every key is refused, as a hosted gateway refuses keys when control is
// away. Tenant administration, usage, invoices, backups and the console
// are the hosted gateway's alone: their routes are not mounted here. No
// plan applies (no rate limits or monthly caps: the shard is the
// tenant's own hardware), and requests served here are not counted as
// api_requests.

// LocalTrust makes a gateway a self-hosted shard node's local API.
type LocalTrust struct {
	// TenantID and ShardID are the node's own (its certificate's): only
	// that tenant's keys, and its namespaces on that shard, are served.
	TenantID, ShardID string
	// ShardAddr is how the node is reached: "unix:<path>", its socket.
	ShardAddr string
	// Bundle is the newest trust bundle the node holds and when it
	// arrived; ok is false before the first.
	Bundle func() (b wire.TrustBundle, receivedAt time.Time, ok bool)
}

func (l *LocalTrust) validate(c Config) error {
	switch {
	case l.TenantID == "" || l.ShardID == "":
		return errors.New("gateway: a local API needs its node's tenant and shard")
	case !strings.HasPrefix(l.ShardAddr, "unix:"):
		return errors.New("gateway: a local API reaches its node over a Unix socket (unix:<path>)")
	case l.Bundle == nil:
		return errors.New("gateway: a local API needs its node's trust bundle")
	case c.ControlURL != "" || c.TunnelAddr != "" || c.Gossip != nil || c.MetricsAddr != "":
		return errors.New("gateway: a local API has no control URL, tunnel listener, gossip or metrics listener")
	}
	return nil
}

// localControl answers, from the trust bundle, what the gateway asks
// control on the data plane's path.
type localControl struct{ cfg *LocalTrust }

// do is controlClient.do for a local API.
func (lc *localControl) do(method, path string) (controlReply, error) {
	b, at, ok := lc.cfg.Bundle()
	if !ok {
		return controlReply{}, errors.New("gateway: no trust bundle from the hosted service yet")
	}
	reply := func(v any) (controlReply, error) {
		raw, err := json.Marshal(v)
		if err != nil {
			return controlReply{}, err
		}
		return controlReply{status: http.StatusOK, contentType: "application/json", body: raw}, nil
	}
	var tenant, rest string
	isTenant := false
	if after, ok := strings.CutPrefix(path, "/internal/v1/tenants/"); ok {
		tenant, rest, isTenant = strings.Cut(after, "/")
	}
	if isTenant {
		if t, err := url.PathUnescape(tenant); err != nil || t != lc.cfg.TenantID {
			return notFoundReply("no such tenant here"), nil
		}
	}
	switch {
	case method == http.MethodPost && (path == keyUsagePath || path == apiRequestsPath):
		// last_used_at and api_requests are the hosted gateways' to report.
		return controlReply{status: http.StatusNoContent}, nil
	case method != http.MethodGet:
	case path == jwksPath:
		return controlReply{status: http.StatusOK, contentType: "application/json", body: b.JWKS}, nil
	case path == revocationsPath:
		r, err := reply(b.Revocations)
		r.asOf = at
		return r, err
	case isTenant && rest == "roles":
		return reply(b.Roles)
	case isTenant && (rest == "plan" || rest == strings.TrimPrefix(quotaPath, "/")):
		return notFoundReply("no plan applies on a self-hosted shard's local API"), nil
	case isTenant && strings.HasPrefix(rest, "namespaces/"):
		name, err := url.PathUnescape(strings.TrimPrefix(rest, "namespaces/"))
		if err != nil {
			break
		}
		for _, ns := range b.Namespaces {
			if ns.Name == name {
				ns.ShardID, ns.ShardAddr, ns.ShardMembers, ns.Moving = b.ShardID, lc.cfg.ShardAddr, nil, false
				return reply(ns)
			}
		}
		return notFoundReply("namespace " + name + " is not on this shard"), nil
	}
	return controlReply{}, errors.New("gateway: " + method + " " + path + " is not served by a self-hosted shard's local API")
}

func notFoundReply(msg string) controlReply {
	raw, _ := json.Marshal(wire.ErrorBody{Error: apierr.New(apierr.NotFound, "%s", msg).Wire()})
	return controlReply{status: http.StatusNotFound, contentType: "application/json", body: raw}
}

// localOnly reports whether rt is served by a local API: the endpoints a
// namespace's shard serves (jobs, queues, schedules, workers, events).
func localOnly(rt route) bool { return rt.serve.queues }

// errLocalOpen is open's answer on a local API: nothing it serves streams
// from control.
var errLocalOpen = errors.New("gateway: a self-hosted shard's local API streams nothing from control")

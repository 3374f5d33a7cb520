package gateway

import (
	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/gateway/selfhosted"
	"github.com/jobbie/jobbie/internal/controlclient"
	"github.com/jobbie/jobbie/internal/pki"
)

// newControl is what this gateway asks control through: control's
// internal API, over mutual TLS admitting control alone, failing over
// between the nodes of ControlURL and those gossip knows; or, for a
// self-hosted node's local API, the node's trust bundle. close releases
// what it holds.
func newControl(cfg Config) (c controlapi.Control, close func()) {
	switch {
	case cfg.control != nil:
		return cfg.control, func() {}
	case cfg.Local != nil:
		return selfhosted.NewLocal(cfg.Local), func() {}
	}
	cl := controlclient.New(controlclient.Config{URL: cfg.ControlURL, TLS: cfg.TLS.Client(pki.Roles(pki.RoleControl)),
		Gossip: cfg.Gossip, Timeout: cfg.ControlTimeout, MaxBody: maxControlBody})
	return controlapi.NewHTTP(cl), cl.Close
}

// maxControlBody bounds what the gateway reads from control; key and
// namespace lists are the largest answers.
const maxControlBody = 32 * mib

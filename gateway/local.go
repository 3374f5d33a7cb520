package gateway

import (
	"errors"

	"github.com/jobbie/jobbie/gateway/selfhosted"
)

// LocalTrust makes a gateway a self-hosted shard node's local API
// (selfhosted/local.go says what that is).
type LocalTrust = selfhosted.LocalTrust

// validateLocal checks a local API's config: it has no ControlURL, TLS
// tunnel listener, gossip or metrics listener.
func (c Config) validateLocal() error {
	if err := c.Local.Validate(); err != nil {
		return err
	}
	if c.ControlURL != "" || c.TunnelAddr != "" || c.Gossip != nil || c.MetricsAddr != "" {
		return errors.New("gateway: a local API has no control URL, tunnel listener, gossip or metrics listener")
	}
	return nil
}

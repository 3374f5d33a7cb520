package engine

import (
	"errors"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/replica"
	"github.com/jobbie/jobbie/shard/keys"
)

// NamespaceConfig is a namespace's own settings on the shard
// (keys.NamespaceConfig), set by PUT /api/v1/namespace. The key lies under
// the namespace's prefix, so a namespace purge removes it with the rest.
type NamespaceConfig struct {
	// Retention of the namespace's completed and cancelled jobs whose
	// queue sets none (ns); 0 is the node's (Options.Retention).
	Retention int64 `codec:"rt,omitempty"`
	// EgressAllow is the hosts the namespace's push queues and webhooks
	// may call (names and "*.domain" patterns, outbound.CheckAllowList);
	// empty is any public host.
	EgressAllow []string `codec:"ea,omitempty"`
	// OTLPEndpoint is the URL the namespace's own collector takes OTLP
	// traces at (internal/tracing.Namespaces); "" for none.
	OTLPEndpoint string `codec:"ot,omitempty"`
}

func (c NamespaceConfig) isZero() bool {
	return c.Retention == 0 && len(c.EgressAllow) == 0 && c.OTLPEndpoint == ""
}

// NamespaceConfigCmd replaces a namespace's settings as a whole, or keeps
// the ones its Keep flags name (so a change of one setting cannot undo a
// concurrent change of the other); zero settings delete the record.
type NamespaceConfigCmd struct {
	NS     string          `codec:"ns"`
	Config NamespaceConfig `codec:"c"`
	// KeepRetention, KeepEgress and KeepOTLP keep the setting as it is,
	// whatever Config says of it (NamespaceConfigureEgress and
	// NamespaceConfigureOTLP only; KeepOTLP the latter only).
	KeepRetention bool `codec:"kr,omitempty"`
	KeepEgress    bool `codec:"ke,omitempty"`
	KeepOTLP      bool `codec:"ko,omitempty"`
}

func (e *Engine) applyNamespaceConfigure(tx *replica.Tx, c *NamespaceConfigCmd) (replica.None, error) {
	if c.Config.Retention < 0 {
		return replica.None{}, apierr.Field("retention", "retention must not be negative")
	}
	cfg := c.Config
	if c.KeepRetention || c.KeepEgress || c.KeepOTLP {
		old := e.namespaceConfig(tx, c.NS)
		if c.KeepRetention {
			cfg.Retention = old.Retention
		}
		if c.KeepEgress {
			cfg.EgressAllow = old.EgressAllow
		}
		if c.KeepOTLP {
			cfg.OTLPEndpoint = old.OTLPEndpoint
		}
	}
	k := keys.NamespaceConfig(c.NS)
	if cfg.isZero() {
		must(tx.Delete(k, nil))
		cfg = NamespaceConfig{}
	} else {
		registerNamespace(tx, c.NS)
		must(tx.Set(k, replica.Encode(&cfg), nil))
	}
	e.nsConfigs[c.NS] = cfg
	return replica.None{}, nil
}

// ReadNamespaceConfig returns ns's settings as last applied in r (zero
// when it sets none).
func ReadNamespaceConfig(r pebble.Reader, ns string) NamespaceConfig {
	var out NamespaceConfig
	v, closer, err := r.Get(keys.NamespaceConfig(ns))
	if errors.Is(err, pebble.ErrNotFound) {
		return out
	}
	must(err)
	defer closer.Close()
	must(replica.Decode(v, &out))
	return out
}

// namespaceConfig is ns's settings inside an apply (FSM goroutine only),
// read once and then kept: the retention observer asks on every finish.
func (e *Engine) namespaceConfig(r pebble.Reader, ns string) NamespaceConfig {
	if c, ok := e.nsConfigs[ns]; ok {
		return c
	}
	c := ReadNamespaceConfig(r, ns)
	e.nsConfigs[ns] = c
	return c
}

package sso

import (
	"context"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/jobbie/jobbie/wire"
)

const (
	// ProviderTTL is how long a tenant's discovered provider (its
	// discovery document, and its keys as go-oidc's RemoteKeySet caches
	// them: fetched again only for a key id it has not seen) serves
	// sign-ins before it is discovered again.
	ProviderTTL = time.Hour
	// maxProviders bounds the providers kept; past it the least recently
	// used is discovered again at its next sign-in.
	maxProviders = 10000
)

// cachedProvider is a tenant's provider as discovered under one
// configuration.
type cachedProvider struct {
	issuer   string
	configAt time.Time // the configuration's updated_at
	provider *oidc.Provider
	expires  time.Time
}

func newProviders() *lru.Cache[string, cachedProvider] {
	c, _ := lru.New[string, cachedProvider](maxProviders) // only a size <= 0 fails
	return c
}

// provider is the tenant's provider: the one discovered before while it
// is younger than ProviderTTL and the tenant's configuration is the one
// it was discovered under (a change of it, whatever the change, is
// discovered again: a new issuer never meets the old one's keys), else
// discovered now. ctx carries the egress guard's client of the tenant
// (oidc.ClientContext), which the provider keeps for its keys and
// userinfo; a failed discovery is not kept.
func (rp *RP) provider(ctx context.Context, in wire.SSOSignIn) (*oidc.Provider, error) {
	now := rp.cfg.Clock.Now()
	if c, ok := rp.providers.Get(in.TenantID); ok && c.issuer == in.Config.IssuerURL &&
		c.configAt.Equal(in.Config.UpdatedAt) && now.Before(c.expires) {
		return c.provider, nil
	}
	p, err := oidc.NewProvider(ctx, in.Config.IssuerURL)
	if err != nil {
		rp.providers.Remove(in.TenantID)
		return nil, err
	}
	rp.providers.Add(in.TenantID, cachedProvider{issuer: in.Config.IssuerURL, configAt: in.Config.UpdatedAt, provider: p,
		expires: now.Add(ProviderTTL)})
	return p, nil
}

package sso

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jonboulle/clockwork"
	"golang.org/x/oauth2"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/outbound"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

const (
	// FlowTTL is how long a person has at the provider between the start
	// of a sign-in and its callback.
	FlowTTL = 10 * time.Minute
	// maxFlows bounds the sign-ins in progress a gateway keeps; past it
	// the oldest is forgotten (its callback then fails: sign in again).
	maxFlows = 10000
	// callTimeout bounds each step's calls to the provider.
	callTimeout = 15 * time.Second
)

// Config configures the relying party.
type Config struct {
	Control  controlapi.Control
	Outbound *outbound.Client
	Clock    clockwork.Clock
	Logger   *slog.Logger
}

// RP runs sign-ins. A sign-in in progress (its state, nonce and PKCE
// verifier) is kept by the gateway that started it, under a random id
// the browser holds in a cookie: the callback must reach the same
// gateway, as a console session must.
type RP struct {
	cfg       Config
	flows     *lru.Cache[string, flow]
	providers *lru.Cache[string, cachedProvider] // by tenant id (providers.go)
}

// flow is a sign-in in progress.
type flow struct {
	tenantID, state, nonce, verifier, redirectURL string
	expires                                       time.Time
}

// Person is who signed in, and the role their tenant's configuration
// gives them.
type Person struct {
	TenantID string
	Issuer   string
	Subject  string
	Email    string
	Name     string
	Role     tenancy.Role
	// ConfigAt is the updated_at of the configuration that admitted them.
	ConfigAt time.Time
}

// New returns a relying party.
func New(cfg Config) (*RP, error) {
	flows, err := lru.New[string, flow](maxFlows)
	if err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &RP{cfg: cfg, flows: flows, providers: newProviders()}, nil
}

// Start begins a sign-in for the tenant q names, to come back to
// redirectURL: the provider's authorization URL to send the browser to,
// and the flow's id for the browser's cookie. 404 when no tenant signs
// in by q.
func (rp *RP) Start(ctx context.Context, requestID string, q controlapi.SSOLookup, redirectURL string) (authURL, flowID string, err error) {
	in, err := rp.lookup(ctx, requestID, q)
	if err != nil {
		return "", "", err
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, rp.httpClient(in.TenantID)), callTimeout)
	defer cancel()
	oc, _, err := rp.client(ctx, in, redirectURL)
	if err != nil {
		return "", "", err
	}
	f := flow{tenantID: in.TenantID, state: random(), nonce: random(), verifier: oauth2.GenerateVerifier(),
		redirectURL: redirectURL, expires: rp.cfg.Clock.Now().Add(FlowTTL)}
	flowID = random()
	rp.flows.Add(flowID, f)
	return oc.AuthCodeURL(f.state, oidc.Nonce(f.nonce), oauth2.S256ChallengeOption(f.verifier)), flowID, nil
}

// FlowTenant is the tenant of the sign-in in progress flowID ("tenant:"
// and its id), for the callback's rate limit; empty when there is none.
func (rp *RP) FlowTenant(flowID string) string {
	if f, ok := rp.flows.Peek(flowID); ok && flowID != "" {
		return "tenant:" + f.tenantID
	}
	return ""
}

// Finish ends the sign-in flowID with the provider's callback (its
// state and code): the code exchanged with the flow's PKCE verifier, the
// ID token verified (signature, issuer, audience, expiry, nonce), the
// person admitted and given a role by the tenant's configuration as it
// is now. The flow is used once, whatever the outcome.
func (rp *RP) Finish(ctx context.Context, requestID, flowID, state, code string) (Person, error) {
	f, ok := rp.flows.Peek(flowID)
	ok = ok && rp.flows.Remove(flowID) // of two callbacks of one flow, one takes it
	if flowID == "" || !ok || !rp.cfg.Clock.Now().Before(f.expires) {
		return Person{}, apierr.New(apierr.Unauthenticated, "no sign-in in progress in this browser (it expired after %s, or began at another gateway): sign in again", FlowTTL)
	}
	if state == "" || state != f.state {
		return Person{}, apierr.Field("state", "the provider's answer does not match this browser's sign-in (state): sign in again")
	}
	if code == "" {
		return Person{}, apierr.Field("code", "the provider sent no authorization code")
	}
	in, err := rp.lookup(ctx, requestID, controlapi.SSOLookup{TenantID: f.tenantID})
	if err != nil {
		return Person{}, err
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, rp.httpClient(in.TenantID)), callTimeout)
	defer cancel()
	oc, provider, err := rp.client(ctx, in, f.redirectURL)
	if err != nil {
		return Person{}, err
	}
	tok, err := oc.Exchange(ctx, code, oauth2.VerifierOption(f.verifier))
	if err != nil {
		return Person{}, providerRefused("exchanging the authorization code", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Person{}, apierr.New(apierr.Unauthenticated, "the provider answered no ID token")
	}
	idt, err := provider.Verifier(&oidc.Config{ClientID: in.Config.ClientID, Now: rp.cfg.Clock.Now}).Verify(ctx, raw)
	if err != nil {
		return Person{}, apierr.New(apierr.Unauthenticated, "the provider's ID token is not valid: %v", err)
	}
	if idt.Nonce != f.nonce {
		return Person{}, apierr.New(apierr.Unauthenticated, "the provider's ID token is not this sign-in's (nonce)")
	}
	cl, err := rp.claims(ctx, provider, tok, idt, in.Config.GroupsClaim)
	if err != nil {
		return Person{}, err
	}
	role, err := Decide(in.Config, cl)
	if err != nil {
		return Person{}, err
	}
	p := Person{TenantID: in.TenantID, Issuer: idt.Issuer, Subject: idt.Subject, Name: cl.Name, Role: role, ConfigAt: in.Config.UpdatedAt}
	if cl.verified() {
		p.Email = cl.Email // the person is named by it (the audit log's key id) only when the provider vouches for it
	}
	return p, nil
}

// lookup asks control for the tenant's configuration.
func (rp *RP) lookup(ctx context.Context, requestID string, q controlapi.SSOLookup) (wire.SSOSignIn, error) {
	in, err := rp.cfg.Control.SSOSignIn(ctx, requestID, q)
	if err != nil {
		if controlapi.NotFound(err) {
			return wire.SSOSignIn{}, apierr.New(apierr.NotFound, "no tenant signs in with SSO by that name or email domain")
		}
		return wire.SSOSignIn{}, apierr.New(apierr.Unavailable, "the tenant's SSO configuration could not be read: try again")
	}
	return in, nil
}

// client finds the tenant's provider (discovered, or as cached:
// providers.go) and builds its OAuth 2 client; ctx carries the HTTP
// client of the egress guard (oidc.ClientContext), which every call to
// the provider made with them uses.
func (rp *RP) client(ctx context.Context, in wire.SSOSignIn, redirectURL string) (*oauth2.Config, *oidc.Provider, error) {
	provider, err := rp.provider(ctx, in)
	if err != nil {
		return nil, nil, providerRefused("reading its discovery document", err)
	}
	scopes := []string{oidc.ScopeOpenID, "email", "profile"}
	if len(in.Config.AllowedGroups) > 0 || len(in.Config.GroupRoles) > 0 {
		scopes = append(scopes, "groups")
	}
	return &oauth2.Config{ClientID: in.Config.ClientID, ClientSecret: in.ClientSecret, Endpoint: provider.Endpoint(),
		RedirectURL: redirectURL, Scopes: scopes}, provider, nil
}

func (rp *RP) httpClient(tenant string) *http.Client { return rp.cfg.Outbound.HTTPClient(tenant) }

// claimSet is what a person's claims say of them.
type claimSet struct {
	Email         string
	EmailVerified *bool
	Name          string
	Groups        []string
}

// claims reads the person's claims from the ID token, and from the
// provider's userinfo answer for those it lacks (email, its verification,
// name, groups), whose subject must be the token's.
func (rp *RP) claims(ctx context.Context, provider *oidc.Provider, tok *oauth2.Token, idt *oidc.IDToken, groupsClaim string) (claimSet, error) {
	var all map[string]any
	if err := idt.Claims(&all); err != nil {
		return claimSet{}, apierr.New(apierr.Unauthenticated, "the provider's ID token has unreadable claims")
	}
	cl := readClaims(all, groupsClaim)
	_, hasGroups := all[groupsClaim]
	if (cl.Email != "" && cl.EmailVerified != nil && cl.Name != "" && hasGroups) || provider.UserInfoEndpoint() == "" {
		return cl, nil
	}
	ui, err := provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		return claimSet{}, providerRefused("reading the person's userinfo", err)
	}
	if ui.Subject != idt.Subject {
		return claimSet{}, apierr.New(apierr.Unauthenticated, "the provider's userinfo is not the ID token's person")
	}
	var more map[string]any
	if err := ui.Claims(&more); err != nil {
		return claimSet{}, apierr.New(apierr.Unauthenticated, "the provider's userinfo is unreadable")
	}
	for k, v := range more {
		if _, ok := all[k]; !ok {
			all[k] = v
		}
	}
	return readClaims(all, groupsClaim), nil
}

func readClaims(all map[string]any, groupsClaim string) claimSet {
	cl := claimSet{}
	cl.Email, _ = all["email"].(string)
	cl.Email = strings.ToLower(strings.TrimSpace(cl.Email))
	cl.Name, _ = all["name"].(string)
	switch v := all["email_verified"].(type) {
	case bool:
		cl.EmailVerified = &v
	case string: // some providers send "true"/"false"
		b := v == "true"
		cl.EmailVerified = &b
	}
	switch v := all[groupsClaim].(type) {
	case []any:
		for _, g := range v {
			if s, ok := g.(string); ok {
				cl.Groups = append(cl.Groups, s)
			}
		}
	case string:
		cl.Groups = []string{v}
	}
	return cl
}

// verified reports an email the provider says it verified
// (email_verified true): one it does not vouch for may be anyone's.
func (cl claimSet) verified() bool {
	return cl.Email != "" && cl.EmailVerified != nil && *cl.EmailVerified
}

// Decide is whether a person with claims cl may sign in under cfg, and
// with which role: a verified email at an allowed domain, or a group of
// allowed_groups; the first group_roles entry of one of their groups,
// else default_role.
func Decide(cfg wire.SSOConfig, cl claimSet) (tenancy.Role, error) {
	domainOK := false
	if at := strings.LastIndexByte(cl.Email, '@'); at > 0 && cl.verified() {
		domainOK = slices.Contains(cfg.AllowedDomains, cl.Email[at+1:])
	}
	groupOK := slices.ContainsFunc(cfg.AllowedGroups, func(g string) bool { return slices.Contains(cl.Groups, g) })
	if !domainOK && !groupOK {
		return "", apierr.New(apierr.Forbidden, "%s is not allowed to sign in to this tenant: neither a verified email at an allowed domain nor a member of an allowed group", who(cl))
	}
	for _, gr := range cfg.GroupRoles {
		if slices.Contains(cl.Groups, gr.Group) {
			return tenancy.Role(gr.Role), nil
		}
	}
	if cfg.DefaultRole != "" {
		return tenancy.Role(cfg.DefaultRole), nil
	}
	return "", apierr.New(apierr.Forbidden, "%s is in no group the tenant maps to a role, and the tenant gives no default role", who(cl))
}

func who(cl claimSet) string {
	if cl.Email != "" {
		return cl.Email
	}
	return "this person"
}

// providerRefused is a failed call to the provider, as the person is
// told of it: the step, and the guard's or provider's reason, never the
// client secret (no error here carries it).
func providerRefused(step string, err error) error {
	var oe *outbound.Error
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &oe) && oe.Kind == outbound.KindRefused:
		return apierr.New(apierr.Unavailable, "the identity provider cannot be reached while %s: %v", step, oe)
	case errors.As(err, &re):
		return apierr.New(apierr.Unauthenticated, "the identity provider refused %s: %s", step, refusal(re))
	}
	return apierr.New(apierr.Unavailable, "the identity provider failed while %s: %v", step, err)
}

func refusal(re *oauth2.RetrieveError) string {
	if re.ErrorCode != "" {
		return strings.TrimSpace(re.ErrorCode + " " + re.ErrorDescription)
	}
	return fmt.Sprintf("status %d", re.Response.StatusCode)
}

func random() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

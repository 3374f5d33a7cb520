package console

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admission"
	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/gateway/sso"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Sign-in through the tenant's identity provider (gateway/sso): the
// sign-in screen sends the browser to /console/api/sso/start, which
// sends it on to the provider; the provider sends it back to the
// callback, which makes the person's session and sends the browser to
// the console. Each step is a top-level navigation, so a refusal is
// told by sending the browser to the sign-in screen with the reason
// (?sso_error=), never a JSON page.

const (
	// flowCookie carries the id of the browser's sign-in in progress.
	// SameSite=Lax: the provider's redirect back is a cross-site
	// navigation, which a Strict cookie would not come with.
	flowCookie = "jobbie_sso"
	flowPath   = "/console/api/sso/"
	// ssoTimeout bounds one step: control's lookup and the provider's calls.
	ssoTimeout = 30 * time.Second
)

// startSSO is GET /console/api/sso/start?tenant=<name> (or ?email=, whose
// domain finds the tenant).
func (s *Console) startSSO(c *fiber.Ctx) error {
	if s.sso == nil {
		return s.ssoRefused(c, apierr.New(apierr.NotFound, "this gateway does not offer sign-in through an identity provider"))
	}
	q, err := lookupOf(c.Query("tenant"), c.Query("email"))
	if err != nil {
		return s.ssoRefused(c, err)
	}
	if err := s.signInLimit(c, limitKey(q)); err != nil {
		return err // 429 with Retry-After: a flood is not sent on to the sign-in screen
	}
	ctx, cancel := context.WithTimeout(context.Background(), ssoTimeout)
	defer cancel()
	authURL, flowID, err := s.sso.Start(ctx, apierr.RequestIDOf(c), q, s.baseURL(c)+wire.SSOCallbackPath)
	if err != nil {
		return s.ssoRefused(c, err)
	}
	c.Cookie(&fiber.Cookie{Name: flowCookie, Value: flowID, Path: flowPath, MaxAge: int(sso.FlowTTL / time.Second),
		HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: c.Protocol() == "https"})
	return c.Redirect(authURL, fiber.StatusSeeOther)
}

// lookupOf names the tenant by its name, or by an email's domain.
func lookupOf(tenant, email string) (controlapi.SSOLookup, error) {
	tenant, email = strings.TrimSpace(tenant), strings.ToLower(strings.TrimSpace(email))
	switch {
	case tenant != "":
		return controlapi.SSOLookup{TenantName: tenant}, nil
	case email != "":
		at := strings.LastIndexByte(email, '@')
		if at < 1 || !wire.ValidEmailDomain(email[at+1:]) {
			return controlapi.SSOLookup{}, apierr.Field("email", "%q is not an email address", email)
		}
		return controlapi.SSOLookup{Domain: email[at+1:]}, nil
	}
	return controlapi.SSOLookup{}, apierr.Field("tenant", "tenant (the tenant's name) or email is required")
}

// limitKey is the tenant a start counts against before control is asked
// which tenant it is: its name, or the email's domain (a flood by either
// is bounded without a lookup).
func limitKey(q controlapi.SSOLookup) string {
	if q.TenantName != "" {
		return "name:" + q.TenantName
	}
	return "domain:" + q.Domain
}

// ssoCallback is GET /console/api/sso/callback?code=&state= (or the
// provider's ?error=): the person's session, and the browser sent to the
// console.
func (s *Console) ssoCallback(c *fiber.Ctx) error {
	flowID := c.Cookies(flowCookie)
	c.Cookie(&fiber.Cookie{Name: flowCookie, Value: "", Path: flowPath, Expires: time.Unix(0, 0), HTTPOnly: true,
		SameSite: fiber.CookieSameSiteLaxMode, Secure: c.Protocol() == "https"}) // used once, whatever happens
	if s.sso == nil {
		return s.ssoRefused(c, apierr.New(apierr.NotFound, "this gateway does not offer sign-in through an identity provider"))
	}
	if err := s.signInLimit(c, s.sso.FlowTenant(flowID)); err != nil {
		return err
	}
	if e := c.Query("error"); e != "" {
		return s.ssoRefused(c, apierr.New(apierr.Unauthenticated, "the identity provider did not sign you in: %s %s", e, c.Query("error_description")))
	}
	ctx, cancel := context.WithTimeout(context.Background(), ssoTimeout)
	defer cancel()
	p, err := s.sso.Finish(ctx, apierr.RequestIDOf(c), flowID, c.Query("state"), c.Query("code"))
	if err != nil {
		return s.ssoRefused(c, err)
	}
	person := admission.Person{Issuer: p.Issuer, Subject: p.Subject, Email: p.Email, Name: p.Name, ConfigAt: p.ConfigAt}
	if err := s.limit(c, admission.PersonClaims(&person, p.TenantID, p.Role)); err != nil {
		return s.ssoRefused(c, err)
	}
	token, exp, err := s.gate.Sessions().IssuePerson(person, p.TenantID, p.Role, s.clock.Now())
	if err != nil {
		return s.ssoRefused(c, err)
	}
	admission.SetSessionCookie(c, token, exp)
	return c.Redirect(consolePrefix, fiber.StatusSeeOther)
}

// ssoRefused sends the browser to the sign-in screen with the reason.
func (s *Console) ssoRefused(c *fiber.Ctx, err error) error {
	e := apierr.From(err)
	return c.Redirect(consolePrefix+"?"+url.Values{"sso_error": {e.Message}, "sso_code": {string(e.Code)}}.Encode(), fiber.StatusSeeOther)
}

// baseURL is the gateway's address as the browser reaches it: the
// configured public URL, else the request's own scheme and host.
func (s *Console) baseURL(c *fiber.Ctx) string {
	if s.publicURL != "" {
		return strings.TrimSuffix(s.publicURL, "/")
	}
	return c.BaseURL()
}

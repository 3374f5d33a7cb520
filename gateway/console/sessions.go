package console

import (
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admission"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// The session endpoints under /console/api/: sign in with an API key for
// a session cookie (admission's Sessions), show the session and what its
// key may do (which, like any request of the session, keeps it alive),
// sign out.

// maxSessionBody bounds the sign-in body: an API key and some JSON.
const maxSessionBody = 16 << 10

// SessionAnswer is what the session endpoints say about a session.
type SessionAnswer struct {
	KeyID            string   `json:"key_id"`
	TenantID         string   `json:"tenant_id"`
	Role             string   `json:"role"`
	Namespaces       []string `json:"namespaces"`
	DefaultNamespace string   `json:"default_namespace"`
	// ExpiresAt is when the session ends if it stays idle (each request
	// of it moves this on); EndsBy when it ends however active it is.
	ExpiresAt time.Time `json:"expires_at"`
	EndsBy    time.Time `json:"ends_by"`
	// Namespace is the one asked about (X-Jobbie-Namespace), or the
	// default when the header is absent or names one the key may not use;
	// Actions is what the key's role may do there (on some queue of it, for
	// a custom role), so the console can hide what would be refused.
	Namespace string   `json:"namespace"`
	Actions   []string `json:"actions"`
	// Person is who signed in through the tenant's identity provider;
	// absent for a key's session. KeyID is then the id the person's
	// requests carry ("sso:" and their email).
	Person *PersonAnswer `json:"person,omitempty"`
	// Local is set when the console is on a node's local API (an
	// embedded node's listener): no control plane behind it, so no tenant
	// administration (namespaces, keys, roles, backups, shards, audit log,
	// usage, plan, invoices, SSO); the jobs, queues, schedules, workers,
	// events, webhooks, alerts, costs and budgets of its namespaces only.
	Local *LocalAnswer `json:"local,omitempty"`
}

// LocalAnswer is what a local API serves.
type LocalAnswer struct {
	Namespaces []string `json:"namespaces"` // the namespaces served the key's tenant, for a key of "*" to choose among
}

// PersonAnswer is a person's session's person.
type PersonAnswer struct {
	Email   string `json:"email,omitempty"`
	Name    string `json:"name,omitempty"`
	Subject string `json:"subject"`
	Issuer  string `json:"issuer"`
}

func personAnswer(p *admission.Person) *PersonAnswer {
	if p == nil {
		return nil
	}
	return &PersonAnswer{Email: p.Email, Name: p.Name, Subject: p.Subject, Issuer: p.Issuer}
}

func (s *Console) answerOf(c *fiber.Ctx, k *tenancy.KeyClaims, p *admission.Person, exp, endsBy time.Time) (SessionAnswer, error) {
	ns, err := admission.NamespaceOf(k, c.Get(wire.NamespaceHeader))
	if err != nil {
		ns = k.DefaultNamespace
	}
	acts, err := s.gate.ActionsIn(k, ns, apierr.RequestIDOf(c))
	if err != nil {
		return SessionAnswer{}, err
	}
	a := SessionAnswer{KeyID: k.Subject, TenantID: k.TenantID, Role: string(k.Role),
		Namespaces: slices.Clone(k.Namespaces), DefaultNamespace: k.DefaultNamespace, ExpiresAt: exp.UTC(), EndsBy: endsBy,
		Namespace: ns, Actions: acts, Person: personAnswer(p)}
	if s.local != nil {
		a.Local = &LocalAnswer{Namespaces: s.local(k.TenantID)}
	}
	return a, nil
}

// signIn exchanges an API key for a session: POST /console/api/session
// {"api_key": "…"}. It is a mutation like any other (CSRF-checked), so a
// page of another site cannot sign a browser in with a key of its own.
func (s *Console) signIn(c *fiber.Ctx) error {
	if err := admission.CheckCSRF(c); err != nil {
		return err
	}
	body := c.Request().Body()
	if len(body) > maxSessionBody {
		return apierr.New(apierr.TooLarge, "request body is %d bytes, over this endpoint's limit of %d bytes", len(body), maxSessionBody)
	}
	var in struct {
		APIKey string `json:"api_key"`
	}
	if err := apierr.DecodeJSON(body, &in, true); err != nil {
		return err
	}
	if strings.TrimSpace(in.APIKey) == "" {
		return apierr.Field("api_key", "api_key is required: the API key to sign in with")
	}
	v, err := s.gate.AuthenticateKey("Bearer " + in.APIKey)
	if err != nil {
		return err
	}
	if err := s.limit(c, v.Claims); err != nil {
		return err
	}
	ss := s.gate.Sessions()
	token, exp, err := ss.Issue(v, s.clock.Now())
	if err != nil {
		return err
	}
	admission.SetSessionCookie(c, token, exp)
	sess, err := ss.Verify(token)
	if err != nil {
		return err
	}
	a, err := s.answerOf(c, v.Claims, nil, exp, ss.EndsBy(sess))
	if err != nil {
		return err
	}
	return c.JSON(a)
}

// showSession answers the current session, or 401.
func (s *Console) showSession(c *fiber.Ctx) error {
	cookie := c.Cookies(admission.SessionCookie)
	if cookie == "" {
		return apierr.New(apierr.Unauthenticated, "not signed in: POST /console/api/session with an API key, or sign in with SSO")
	}
	sess, err := s.gate.Sessions().Authenticate(cookie)
	if err != nil {
		return err
	}
	if err := s.limit(c, sess.Key.Claims); err != nil {
		return err // the console polls it: it counts as the tenant's request
	}
	exp := sess.Expires
	if token, slid, ok := s.gate.Sessions().Slide(sess, s.clock.Now()); ok {
		admission.SetSessionCookie(c, token, slid)
		exp = slid
	}
	a, err := s.answerOf(c, sess.Key.Claims, sess.Person, exp, s.gate.Sessions().EndsBy(sess))
	if err != nil {
		return err
	}
	return c.JSON(a)
}

// signOut ends the session and clears its cookie (204, signed in or not).
func (s *Console) signOut(c *fiber.Ctx) error {
	if err := admission.CheckCSRF(c); err != nil {
		return err
	}
	if cookie := c.Cookies(admission.SessionCookie); cookie != "" {
		s.gate.Sessions().SignOut(cookie, s.clock.Now())
	}
	admission.SetSessionCookie(c, "", time.Unix(0, 0))
	return c.SendStatus(fiber.StatusNoContent)
}

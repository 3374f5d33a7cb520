package gateway

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"golang.org/x/text/language"
)

// A real OpenID Connect provider for the tests: zitadel's example OP
// (github.com/zitadel/oidc/v3/example/server), served over TLS on
// 127.0.0.1, with a login form the tests post as a browser would. Its
// storage is wrapped to give each person a groups claim in the userinfo
// answer (the example has none); it puts no email or name in the ID
// token, so the gateway reads them from userinfo.

// opPerson is someone who can sign in at the provider.
type opPerson struct {
	id, email, name string
	groups          []string
	unverified      bool // the provider does not vouch for the email
}

// testOP is a running provider.
type testOP struct {
	issuer  string
	roots   *x509.CertPool
	clients map[string]*storage.Client

	mu   sync.Mutex
	hits map[string]int // requests by path
}

// hitsOf is how many requests the provider has had for path.
func (op *testOP) hitsOf(path string) int {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.hits[path]
}

// opPeople are the provider's people: password "secret" for all.
var opPeople = []opPerson{
	{id: "u-alice", email: "alice@acme.test", name: "Alice Admin", groups: []string{"platform", "jobbie-users"}},
	{id: "u-bob", email: "bob@acme.test", name: "Bob Viewer"},
	{id: "u-carol", email: "carol@elsewhere.test", name: "Carol Outsider", groups: []string{"marketing"}},
	{id: "u-dave", email: "dave@partner.test", name: "Dave Partner", groups: []string{"jobbie-users"}},
	{id: "u-erin", email: "erin@acme.test", name: "Erin Unverified", unverified: true},
}

type opUsers struct{ byID map[string]*storage.User }

func (u opUsers) GetUserByID(id string) *storage.User { return u.byID[id] }
func (u opUsers) GetUserByUsername(name string) *storage.User {
	for _, x := range u.byID {
		if x.Username == name {
			return x
		}
	}
	return nil
}
func (opUsers) ExampleClientID() string { return "unused-service" }

// groupsStorage adds the groups claim to the userinfo answer.
type groupsStorage struct {
	*storage.Storage
	groups map[string][]string // user id → groups
}

func (s groupsStorage) SetUserinfoFromToken(ctx context.Context, ui *oidc.UserInfo, tokenID, subject, origin string) error {
	if err := s.Storage.SetUserinfoFromToken(ctx, ui, tokenID, subject, origin); err != nil {
		return err
	}
	if g, ok := s.groups[ui.Subject]; ok {
		ui.AppendClaims("groups", g)
	}
	return nil
}

// startOP starts a provider on 127.0.0.1 over TLS.
func startOP(t *testing.T) *testOP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	issuer := "https://" + ln.Addr().String()
	users := opUsers{byID: map[string]*storage.User{}}
	groups := map[string][]string{}
	for _, p := range opPeople {
		users.byID[p.id] = &storage.User{ID: p.id, Username: p.email, Password: "secret", FirstName: strings.Fields(p.name)[0],
			LastName: strings.Fields(p.name)[1], Email: p.email, EmailVerified: !p.unverified, PreferredLanguage: language.English}
		groups[p.id] = p.groups
	}
	clients := map[string]*storage.Client{}
	st := groupsStorage{Storage: storage.NewStorageWithClients(users, clients), groups: groups}
	// No logger: SetupServer would make it the process's default.
	op := &testOP{issuer: issuer, clients: clients, hits: map[string]int{}}
	h := exampleop.SetupServer(issuer, st, nil, false)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op.mu.Lock()
		op.hits[r.URL.Path]++
		op.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.StartTLS()
	t.Cleanup(srv.Close)
	op.roots = x509.NewCertPool()
	op.roots.AddCert(srv.Certificate())
	return op
}

// client registers a confidential web client of the provider, whose
// redirect URI is gateway base's SSO callback. Ids are per test: the
// example's clients are its own, but distinct names keep failures clear.
func (op *testOP) client(id, secret, base string) {
	op.clients[id] = storage.WebClient(id, secret, base+"/console/api/sso/callback")
}

// browser is a person's browser: cookies, the provider's certificate
// trusted, redirects followed.
type browser struct {
	c *http.Client
}

func newBrowser(t *testing.T, op *testOP) *browser {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: op.roots}}
	t.Cleanup(tr.CloseIdleConnections)
	return &browser{c: &http.Client{Jar: jar, Transport: tr, Timeout: 30 * time.Second}}
}

var loginFormID = regexp.MustCompile(`name="id" value="([^"]+)"`)

// get fetches u and answers where the redirects ended, and the body.
func (br *browser) get(t *testing.T, u string) (*url.URL, string) {
	t.Helper()
	res, err := br.c.Get(u)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.Request.URL, string(body)
}

// login posts the provider's login form the page at at holds, as email,
// and answers where the redirects ended (the gateway's console, or its
// sign-in screen with the reason).
func (br *browser) login(t *testing.T, at *url.URL, page, email string) *url.URL {
	t.Helper()
	m := loginFormID.FindStringSubmatch(page)
	require.NotNil(t, m, "the provider's login form, at %s: %s", at, page)
	form := url.Values{"id": {m[1]}, "username": {email}, "password": {"secret"}}
	res, err := br.c.PostForm(at.Scheme+"://"+at.Host+"/login/username", form)
	require.NoError(t, err)
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.Request.URL
}

// signIn runs the whole sign-in from the gateway's start URL (query:
// tenant= or email=) as email, answering where it ended.
func (br *browser) signIn(t *testing.T, base, query, email string) *url.URL {
	t.Helper()
	at, page := br.get(t, base+"/console/api/sso/start?"+query)
	require.True(t, strings.HasPrefix(at.Path, "/login/username"), "the provider's login page, not %s: %s", at, page)
	return br.login(t, at, page, email)
}

// do sends a request of the browser's session to the gateway (with the
// CSRF header a console mutation sends).
func (br *browser) do(t *testing.T, method, u string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	require.NoError(t, err)
	req.Header.Set("X-Jobbie-CSRF", "1")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := br.c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// until follows redirects from u until the next one would go to a path
// of stop, and answers that next URL without fetching it (form, when
// not nil, is posted to u instead of a GET).
func (br *browser) until(t *testing.T, u string, form url.Values, stop string) *url.URL {
	t.Helper()
	c := *br.c
	var next *url.URL
	c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Path == stop {
			next = req.URL
			return http.ErrUseLastResponse
		}
		return nil
	}
	var res *http.Response
	var err error
	if form != nil {
		res, err = c.PostForm(u, form)
	} else {
		res, err = c.Get(u)
	}
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	require.NoError(t, res.Body.Close())
	require.NotNil(t, next, "no redirect to %s from %s (ended at %s)", stop, u, res.Request.URL)
	return next
}

// toCallback starts a sign-in, lets auth (the provider's authorization
// URL) be changed, logs in as email and answers the redirect to the
// gateway's callback without following it.
func (br *browser) toCallback(t *testing.T, base, query, email string, auth func(*url.URL)) *url.URL {
	t.Helper()
	a := br.until(t, base+"/console/api/sso/start?"+query, nil, "/auth")
	if auth != nil {
		auth(a)
	}
	at, page := br.get(t, a.String())
	m := loginFormID.FindStringSubmatch(page)
	require.NotNil(t, m, "the provider's login form, at %s: %s", at, page)
	form := url.Values{"id": {m[1]}, "username": {email}, "password": {"secret"}}
	return br.until(t, at.Scheme+"://"+at.Host+"/login/username", form, "/console/api/sso/callback")
}

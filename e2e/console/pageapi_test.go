package console

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Selectors of the console's DOM contract.
const (
	signInForm = "form#signin"
	mainNav    = `nav[aria-label="Main"]`
	sessionCk  = "jobbie_session"
)

// signIn fills the sign-in form with apiKey, submits it and waits for the
// main navigation.
func (p *page) signIn(apiKey string) {
	p.t.Helper()
	p.submitKey(apiKey)
	p.until(waitTimeout, isVisible(mainNav), "signed in: the main navigation shows")
}

// signedIn opens a tab at path, signs in there with key and waits until
// screen is ready.
func signedIn(t *testing.T, key, path, screen string) *page {
	t.Helper()
	p := openPage(t)
	p.goTo(path)
	p.signIn(key)
	p.waitScreen(screen)
	return p
}

// signedInThenOpen opens a tab signed in with key on the dashboard, then
// loads path (a fresh document: readyAt times its screen alone) and waits
// until screen is ready.
func signedInThenOpen(t *testing.T, key, path, screen string) *page {
	t.Helper()
	p := signedIn(t, key, "/console/", "dashboard")
	p.goTo(path)
	p.waitScreen(screen)
	return p
}

// submitKey fills the sign-in form with apiKey and submits it.
func (p *page) submitKey(apiKey string) {
	p.t.Helper()
	p.waitFor(signInForm)
	p.setValue("input#api-key", apiKey)
	p.click("button#signin-submit")
}

// apiReply is the answer to a request the page made.
type apiReply struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
}

// decode reads the body as JSON into v.
func (r apiReply) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.Body), v); err != nil {
		t.Fatalf("answer %d is not JSON: %v: %s", r.Status, err, r.Body)
	}
}

// code is the error code of an error answer ({"error": {"code": …}}).
func (r apiReply) code() string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(r.Body), &e)
	return e.Error.Code
}

// apiJSON makes a request with fetch from inside the page: same origin,
// with the page's cookies, and only the headers given (so no CSRF header
// unless headers has it). body, when not nil, is sent as JSON.
func (p *page) apiJSON(method, path string, body any, headers map[string]string) apiReply {
	p.t.Helper()
	h := map[string]string{}
	var payload any // null: no body
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			p.t.Fatal(err)
		}
		payload = string(b)
		h["Content-Type"] = "application/json"
	}
	for k, v := range headers {
		h[k] = v
	}
	r, err := evalJS[apiReply](p, fmt.Sprintf(`(async () => {
  const body = %s;
  const r = await fetch(%s, {method: %s, headers: %s, credentials: 'same-origin', body: body === null ? undefined : body});
  return {status: r.status, body: await r.text()};
})()`, js(payload), js(path), js(method), js(h)))
	if err != nil {
		p.fail("fetch %s %s from the page: %v", method, path, err)
	}
	return r
}

// csrf is the header the console sends on every mutation.
var csrf = map[string]string{"X-Jobbie-CSRF": "1"}

// cookie is the browser's cookie name for the gateway, nil when it has
// none (HttpOnly ones included: CDP sees them all).
func (p *page) cookie(name string) *network.Cookie {
	p.t.Helper()
	var found *network.Cookie
	err := p.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		res, err := cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{srv.gateway + "/"}})
		for _, c := range res.Cookies {
			if c.Name == name {
				found = c
			}
		}
		return err
	}))
	if err != nil {
		p.fail("read cookies: %v", err)
	}
	return found
}

// setCookie puts cookie name=value for the gateway into the browser, as
// HttpOnly and SameSite=Strict like the gateway's own.
func (p *page) setCookie(name, value string) {
	p.t.Helper()
	err := p.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, network.SetCookie, network.SetCookieParams{Name: name, Value: value,
			URL: srv.gateway + "/", Path: "/", HTTPOnly: new(true), SameSite: network.CookieSameSiteStrict})
		return err
	}))
	if err != nil {
		p.fail("set cookie %s: %v", name, err)
	}
}

// storage is every entry of the page's localStorage and sessionStorage,
// keyed "local:<key>" and "session:<key>".
func (p *page) storage() map[string]string {
	p.t.Helper()
	return eval[map[string]string](p, `(() => {
  const out = {};
  for (const [kind, s] of [['local', localStorage], ['session', sessionStorage]])
    for (let i = 0; i < s.length; i++) out[kind + ':' + s.key(i)] = s.getItem(s.key(i));
  return out;
})()`)
}

// readyAt is when screen first became ready in the current document, in
// ms from the navigation's start (performance.now()); -1 if it has not.
func (p *page) readyAt(screen string) float64 {
	p.t.Helper()
	return eval[float64](p, fmt.Sprintf("window.__jobbieReady[%s] ?? -1", js(screen)))
}

// path is the page's location path.
func (p *page) path() string {
	p.t.Helper()
	return eval[string](p, "location.pathname")
}

// typeText focuses sel and types v into it as the keyboard would insert
// it (Input.insertText: beforeinput and input events, one command).
// Use chromedp.SendKeys through p.do for key events one by one.
func (p *page) typeText(sel, v string) {
	p.t.Helper()
	p.waitFor(sel)
	err := p.do(chromedp.Focus(chromedp.CSS(sel)), chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, input.InsertText, input.InsertTextParams{Text: v})
		return err
	}))
	if err != nil {
		p.fail("type into %s: %v", sel, err)
	}
}

// setViewport sets the page's size in CSS pixels (390, 844: a phone).
func (p *page) setViewport(w, h int) {
	p.t.Helper()
	if err := p.do(chromedp.EmulateViewport(int64(w), int64(h))); err != nil {
		p.fail("set viewport %dx%d: %v", w, h, err)
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// shot saves a full-page PNG into the shots directory and returns its path.
func (p *page) shot(name string) string {
	p.t.Helper()
	c, cancel := context.WithTimeout(p.ctx, actionTimeout)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	path := filepath.Join(shotsDir, unsafeName.ReplaceAllString(p.t.Name()+"-"+name, "_")+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	p.t.Logf("screenshot: %s", path)
	return path
}

// fail ends the test with a screenshot, the page's URL and text, and its
// last console lines.
func (p *page) fail(format string, args ...any) {
	p.t.Helper()
	msg := fmt.Sprintf(format, args...)
	p.shot("failure")
	state, _ := evalJS[string](p, `location.pathname + location.search + "\n" +
  (document.body ? document.body.innerText : document.documentElement.outerHTML).slice(0, 4000)`)
	p.mu.Lock()
	recent := strings.Join(p.recent, "\n  ")
	p.mu.Unlock()
	p.t.Fatalf("%s\n--- page at %s\n--- console:\n  %s", msg, state, recent)
}

package console

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

const (
	waitTimeout   = 10 * time.Second // for a screen, an element or a text to show
	actionTimeout = 10 * time.Second // for one browser command
	pollEvery     = 20 * time.Millisecond
)

// page is one test's browser tab, in a browser context of its own (no
// cookies or storage shared with other tests). It fails the test when the
// page throws an uncaught exception or reports a CSP violation.
type page struct {
	t   *testing.T
	ctx context.Context // the tab's chromedp context

	mu       sync.Mutex
	problems []string // uncaught exceptions and CSP violations
	recent   []string // the last console lines, for failure reports
}

// initScript runs in every document before the page's own scripts (CDP
// injects it, so the CSP does not apply to it). It records when each
// screen first became ready (window.__jobbieReady[name], in ms of
// performance.now(), so from the navigation's start) and reports CSP
// violations to the console, where the listener sees them.
const initScript = `(() => {
  const seen = {};
  Object.defineProperty(window, '__jobbieReady', {value: seen});
  const check = () => {
    for (const el of document.querySelectorAll('[data-screen][data-ready="true"]')) {
      const n = el.getAttribute('data-screen');
      if (!(n in seen)) seen[n] = performance.now();
    }
  };
  new MutationObserver(check).observe(document, {subtree: true, childList: true, attributes: true,
    attributeFilter: ['data-ready', 'data-screen']});
  document.addEventListener('securitypolicyviolation', (e) =>
    console.error('Content Security Policy violation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline')));
})();`

// openPage opens a tab for t, closed when t ends.
func openPage(t *testing.T) *page {
	t.Helper()
	p := &page{t: t}
	tab, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext(), chromedp.WithListener(p.listen))
	p.ctx = tab
	t.Cleanup(func() {
		p.mu.Lock()
		for _, msg := range p.problems {
			t.Errorf("page: %s", msg)
		}
		p.mu.Unlock()
		cancel()
	})
	err := chromedp.Do(tab, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, cdppage.AddScriptToEvaluateOnNewDocument,
			cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: initScript})
		return err
	}))
	if err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return p
}

// listen runs in the tab's event loop: it must not block or send commands.
func (p *page) listen(ev any) {
	var line string
	problem := false
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			text += " " + d.Exception.Description
		}
		line, problem = fmt.Sprintf("uncaught exception at %s:%d: %s", d.URL, d.LineNumber+1, text), true
	case *log.EventEntryAdded:
		e := ev.Entry
		line = fmt.Sprintf("browser %s %s: %s %s", e.Source, e.Level, e.Text, e.URL)
		problem = strings.Contains(e.Text, "Content Security Policy")
	case *runtime.EventConsoleAPICalled:
		var parts []string
		for _, a := range ev.Args {
			if a.Description != "" {
				parts = append(parts, a.Description)
			} else {
				parts = append(parts, string(a.Value))
			}
		}
		line = fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(parts, " "))
		problem = strings.Contains(line, "Content Security Policy")
	default:
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if problem {
		p.problems = append(p.problems, line)
	}
	if p.recent = append(p.recent, line); len(p.recent) > 30 {
		p.recent = p.recent[1:]
	}
}

// do runs steps in the tab with the action timeout.
func (p *page) do(steps ...chromedp.Action[chromedp.Void]) error {
	c, cancel := context.WithTimeout(p.ctx, actionTimeout)
	defer cancel()
	return chromedp.Do(c, steps...)
}

// evalJS evaluates expr in the page (awaiting a promise) as a T.
func evalJS[T any](p *page, expr string) (T, error) {
	c, cancel := context.WithTimeout(p.ctx, actionTimeout)
	defer cancel()
	return chromedp.Run(c, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// eval is evalJS that fails the test on an error.
func eval[T any](p *page, expr string) T {
	p.t.Helper()
	v, err := evalJS[T](p, expr)
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// js quotes v as a JavaScript literal.
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// goTo navigates to path (such as /console/queues) on the gateway and
// waits for the page to load.
func (p *page) goTo(path string) {
	p.t.Helper()
	if err := p.do(chromedp.Navigate(srv.gateway + path)); err != nil {
		p.fail("navigate to %s: %v", path, err)
	}
}

// reload reloads the page and waits for it to load.
func (p *page) reload() {
	p.t.Helper()
	if err := p.do(chromedp.Reload()); err != nil {
		p.fail("reload: %v", err)
	}
}

// until polls the JavaScript condition cond until it holds, or fails the
// test after timeout with a screenshot and the page's text.
func (p *page) until(timeout time.Duration, cond, what string) {
	p.t.Helper()
	if !p.poll(timeout, cond) {
		p.fail("not within %s: %s", timeout, what)
	}
}

// poll reports whether the JavaScript condition cond holds within timeout.
// It polls from Go, so it survives navigations.
func (p *page) poll(timeout time.Duration, cond string) bool {
	deadline := time.Now().Add(timeout)
	for {
		c, cancel := context.WithTimeout(p.ctx, time.Second)
		ok, err := chromedp.Run(c, chromedp.Evaluate[bool]("!!("+cond+")"))
		cancel()
		if err == nil && ok {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
}

func query(sel string) string { return "document.querySelector(" + js(sel) + ")" }

// isVisible is a JavaScript condition: sel matches an element that is
// rendered (has a box and is not visibility:hidden).
func isVisible(sel string) string {
	return "((el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden')(" + query(sel) + ")"
}

// waitScreen waits until screen name's root is ready: data-screen=name and
// data-ready=true.
func (p *page) waitScreen(name string) {
	p.t.Helper()
	p.until(waitTimeout, query(fmt.Sprintf(`[data-screen=%q][data-ready="true"]`, name)), "screen "+name+" ready")
}

// waitFor waits until sel matches a visible element.
func (p *page) waitFor(sel string) {
	p.t.Helper()
	p.until(waitTimeout, isVisible(sel), sel+" visible")
}

// waitGone waits until sel matches nothing.
func (p *page) waitGone(sel string) {
	p.t.Helper()
	p.until(waitTimeout, "!"+query(sel), sel+" gone")
}

// waitNoDialog waits until each of gone (a dialog's form) has left the
// page, then until no dialog is open: the console empties a dialog at once
// but closes the <dialog> an effect later, and a click in between lands on
// its backdrop.
func (p *page) waitNoDialog(gone ...string) {
	p.t.Helper()
	for _, sel := range gone {
		p.waitGone(sel)
	}
	p.waitGone("dialog[open]")
}

// waitText waits until sel's text contains want.
func (p *page) waitText(sel, want string) {
	p.t.Helper()
	p.until(waitTimeout, fmt.Sprintf("((el) => !!el && el.innerText.includes(%s))(%s)", js(want), query(sel)),
		fmt.Sprintf("%s shows %q", sel, want))
}

// text is the rendered text of the first element sel matches (waited for).
func (p *page) text(sel string) string {
	p.t.Helper()
	p.until(waitTimeout, query(sel), sel+" present")
	return eval[string](p, query(sel)+".innerText")
}

// visible reports whether sel matches a visible element, now.
func (p *page) visible(sel string) bool {
	p.t.Helper()
	return eval[bool](p, isVisible(sel))
}

// count is how many elements sel matches, now.
func (p *page) count(sel string) int {
	p.t.Helper()
	return eval[int](p, "document.querySelectorAll("+js(sel)+").length")
}

// click waits for sel to be visible and clicks it with the mouse.
func (p *page) click(sel string) {
	p.t.Helper()
	p.waitFor(sel)
	if err := p.do(chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)); err != nil {
		p.fail("click %s: %v", sel, err)
	}
}

// setValue sets an input's, textarea's or select's value as typing would
// (an input and a change event follow), after waiting for it.
func (p *page) setValue(sel, v string) {
	p.t.Helper()
	p.until(waitTimeout, query(sel), sel+" present")
	ok := eval[bool](p, fmt.Sprintf(`((el, v) => {
  const proto = el instanceof HTMLSelectElement ? HTMLSelectElement.prototype :
    el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, v);
  el.dispatchEvent(new Event('input', {bubbles: true}));
  el.dispatchEvent(new Event('change', {bubbles: true}));
  return el.value === v;
})(%s, %s)`, query(sel), js(v)))
	if !ok {
		p.fail("set %s to %q: the element does not take the value", sel, v)
	}
}

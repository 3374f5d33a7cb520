package console

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// takeProblems returns the problems recorded so far and forgets them, for
// a test that provokes them on purpose.
func (p *page) takeProblems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.problems
	p.problems = nil
	return out
}

// The harness waits for text that shows late, and notices what would fail
// a console test: a script the CSP refuses, and an uncaught exception.
func TestHarnessCatchesCSPViolationsAndExceptions(t *testing.T) {
	t.Parallel()
	p := openPage(t)
	p.goTo("/console/")
	eval[bool](p, `(() => { const s = document.createElement('script'); s.textContent = 'window.inlineRan = 1';
  document.head.appendChild(s); return true; })()`)
	require.False(t, eval[bool](p, "!!window.inlineRan"), "the CSP lets an inline script run")
	eval[bool](p, `(() => { setTimeout(() => document.body.append('late text'), 50); return true; })()`)
	p.waitText("body", "late text")
	eval[bool](p, `(() => { setTimeout(() => { throw new Error('boom from the test'); }, 0); return true; })()`)

	var got []string
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		got = append(got, p.takeProblems()...)
		joined := strings.Join(got, "\n")
		if strings.Contains(joined, "Content Security Policy") && strings.Contains(joined, "boom from the test") {
			return
		}
		time.Sleep(pollEvery)
	}
	t.Fatalf("the harness saw %q, want a CSP violation and the exception", got)
}

package console

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// First load: from navigating to /console/ with a session but a cold cache
// to the dashboard being ready takes under a second on loopback, and the
// JavaScript it loads is under 300 KB gzipped. Not parallel: it times.
func TestFirstLoadIsFastAndSmall(t *testing.T) {
	tn := newTenant(t)
	tn.seed(t, "emails", 5)
	signer := signedIn(t, tn.ownerKey, "/console/", "dashboard")
	ck := signer.cookie(sessionCk)
	require.NotNil(t, ck)

	p := openPage(t) // a browser context of its own: nothing cached
	p.setCookie(sessionCk, ck.Value)
	start := time.Now()
	p.goTo("/console/")
	p.waitScreen("dashboard")
	wall := time.Since(start)
	ready := p.readyAt("dashboard")
	t.Logf("first load to dashboard ready: %.0f ms by the page's clock (performance.now), %d ms by the test's wall clock",
		ready, wall.Milliseconds())
	assert.Greater(t, ready, 0.0)
	assert.Less(t, ready, 1000.0, "the dashboard took %.0f ms to be ready", ready)

	scripts := scriptURLs(t)
	for _, u := range eval[[]string](p, `performance.getEntriesByType('resource').map(e => e.name).filter(n => /\.m?js(\?|$)/.test(n))`) {
		if !slices.Contains(scripts, u) {
			scripts = append(scripts, u)
		}
	}
	require.NotEmpty(t, scripts, "index.html loads no script")
	var raw, gz int
	for _, u := range scripts {
		body := get(t, u)
		n := gzipped(t, body)
		t.Logf("  %s: %d bytes, %d gzipped", u, len(body), n)
		raw, gz = raw+len(body), gz+n
	}
	t.Logf("JavaScript of the first load: %d files, %.1f KB, %.1f KB gzipped", len(scripts), float64(raw)/1024, float64(gz)/1024)
	assert.Less(t, gz, 300*1024, "the first load's JavaScript is %d bytes gzipped", gz)
}

var (
	scriptSrc = regexp.MustCompile(`<script\b[^>]*\bsrc="([^"]+)"`)
	preload   = regexp.MustCompile(`<link\b[^>]*\brel="modulepreload"[^>]*\bhref="([^"]+)"|<link\b[^>]*\bhref="([^"]+)"[^>]*\brel="modulepreload"`)
)

// scriptURLs are the absolute URLs of the scripts index.html names
// (<script src> and <link rel=modulepreload>).
func scriptURLs(t *testing.T) []string {
	t.Helper()
	html := string(get(t, srv.gateway+"/console/"))
	var out []string
	add := func(ref string) {
		if ref == "" {
			return
		}
		if strings.HasPrefix(ref, "/") {
			ref = srv.gateway + ref
		} else if !strings.HasPrefix(ref, "http") {
			ref = srv.gateway + "/console/" + ref
		}
		if !slices.Contains(out, ref) {
			out = append(out, ref)
		}
	}
	for _, m := range scriptSrc.FindAllStringSubmatch(html, -1) {
		add(m[1])
	}
	for _, m := range preload.FindAllStringSubmatch(html, -1) {
		add(m[1] + m[2])
	}
	return out
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "GET %s: %s", url, body)
	return body
}

func gzipped(t *testing.T, b []byte) int {
	t.Helper()
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	_, err = w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Len()
}

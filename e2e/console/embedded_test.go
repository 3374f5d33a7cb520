package console

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An embedded Jobbie (the example program, examples/embedded, with
// -console) serves the console on its listener: its owner key signs in,
// the queues the program filled are there, tenant administration is not
// in the menu, and its screens, reached by their address, say they are
// not available.
func TestEmbeddedNodeServesTheConsole(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "embedded")
	build := exec.Command("go", "build", "-o", bin, "github.com/jobbie/jobbie/examples/embedded")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build examples/embedded: %s", out)
	dir := filepath.Join(tmp, "data")
	out, err = exec.Command(bin, "-dir", dir, "-step", "produce", "-jobs", "3").CombinedOutput()
	require.NoError(t, err, "produce: %s", out)

	base := serveEmbedded(t, bin, dir)
	key, err := os.ReadFile(filepath.Join(dir, "owner.key"))
	require.NoError(t, err)

	p := openPage(t)
	at := func(path string) {
		t.Helper()
		require.NoError(t, p.do(chromedp.Navigate(base+path)), "navigate to %s", path)
	}
	at("/console/")
	p.signIn(strings.TrimSpace(string(key)))
	p.waitScreen("dashboard")
	nav := func(href string) int { return p.count(mainNav + ` a[href="/console` + href + `"]`) }
	assert.Equal(t, 1, nav("/queues"))
	assert.Equal(t, 1, nav("/schedules"))
	assert.Equal(t, 1, nav("/costs"))
	for _, href := range []string{"/keys", "/namespaces", "/backups", "/usage", "/invoices"} {
		assert.Zero(t, nav(href), "%s needs control: not in the menu", href)
	}

	at("/console/queues")
	p.waitScreen("queues")
	p.waitFor(`tr[data-queue="example.emails"]`)

	at("/console/keys")
	p.waitScreen("not-served")
	p.waitText("#not-served", "without a control plane")
	r := p.apiJSON("GET", "/api/v1/keys", nil, nil)
	assert.Equal(t, 404, r.Status, r.Body)
}

// serveEmbedded runs bin's serve step on dir with the console on a port
// of its choosing, and answers its base URL; the process is interrupted
// when t ends.
func serveEmbedded(t *testing.T, bin, dir string) string {
	t.Helper()
	cmd := exec.Command(bin, "-dir", dir, "-step", "serve", "-console", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "console: "); ok {
				urls <- strings.TrimSuffix(strings.Fields(rest)[0], "/console/")
			}
		}
		close(urls)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	select {
	case u, ok := <-urls:
		require.True(t, ok, "the program ended without serving: %s", stderr.String())
		return u
	case <-ctx.Done():
		t.Fatalf("the program did not say where it serves within 60s: %s", stderr.String())
	}
	return ""
}

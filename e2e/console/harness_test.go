package console

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jobbie/jobbie/e2e/internal/devproc"
)

// The package shares one `jobbie dev` and one headless Chromium; each test
// opens its own tab in a browser context of its own (its own cookies and
// storage) and works in a tenant of its own.
var (
	binary   string
	srv      *devServer
	browser  context.Context // the browser's chromedp context; tabs are its children
	shotsDir string
)

// chromiumMissing is the failure when no browser is found.
const chromiumMissing = "Chromium is not installed: run `make test` (scripts/install-chromium.sh installs Debian's chromium)"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	chrome, err := findChromium()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "jobbie-console-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if shotsDir = os.Getenv("JOBBIE_CONSOLE_SHOTS"); shotsDir != "" {
		if shotsDir, err = filepath.Abs(shotsDir); err == nil {
			err = os.MkdirAll(shotsDir, 0o755)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "JOBBIE_CONSOLE_SHOTS:", err)
			return 1
		}
		defer fmt.Fprintln(os.Stderr, "console e2e: screenshots kept in", shotsDir)
	} else {
		shotsDir = filepath.Join(tmp, "shots")
		if err := os.Mkdir(shotsDir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if binary, err = devproc.Binary(tmp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	receiverCA, err := writeReceiverCert(tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if srv, err = launch(filepath.Join(tmp, "dev"), os.Getenv("JOBBIE_CONSOLE_DIR"), receiverCA); err != nil {
		fmt.Fprintln(os.Stderr, "start jobbie dev:", err)
		return 1
	}
	defer srv.stop()
	stopBrowser, err := startBrowser(chrome, tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start Chromium:", err)
		return 1
	}
	code := m.Run()
	stopBrowser()
	if code != 0 {
		srv.printLogTail(os.Stderr, 40)
	}
	return code
}

// findChromium is $JOBBIE_CHROMIUM, else the first of the usual names on
// the PATH.
func findChromium() (string, error) {
	if p := os.Getenv("JOBBIE_CHROMIUM"); p != "" {
		path, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("JOBBIE_CHROMIUM=%s: %w; %s", p, err, chromiumMissing)
		}
		return path, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("%s", chromiumMissing)
}

// startBrowser starts headless Chromium with a 1280x900 window and its
// profile under dir, and returns how to stop it.
func startBrowser(chrome, dir string) (stop func(), err error) {
	logf, err := os.Create(filepath.Join(dir, "chromium.log"))
	if err != nil {
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(filepath.Join(dir, "chromium-profile")),
		chromedp.CombinedOutput(logf),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	stop = func() { cancel(); cancelAlloc(); logf.Close() }
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }() // starts the browser and its first tab
	select {
	case err = <-started:
	case <-time.After(30 * time.Second):
		err = fmt.Errorf("not started after 30s; see %s", logf.Name())
	}
	if err != nil {
		stop()
		return nil, err
	}
	browser = ctx
	return stop, nil
}

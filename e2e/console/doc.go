// Package console holds the browser tests of the web console: real
// Chromium, driven with chromedp, against one real `jobbie dev`, and
// against an embedded Jobbie (a build of examples/embedded, which embeds
// the front end built in gateway/console/dist) serving its own console.
//
// Run them with `go test ./e2e/console/`. Environment:
//
//	JOBBIE_BIN            a jobbie binary to test (default: go build ../../cmd/jobbie)
//	JOBBIE_CONSOLE_DIR    serve the front end from this build of gateway/console
//	                      (jobbie dev --console-dir) instead of the embedded one
//	JOBBIE_CHROMIUM       the browser (default: chromium, chromium-browser or
//	                      google-chrome on the PATH)
//	JOBBIE_CONSOLE_SHOTS  keep screenshots in this directory (default: a temporary
//	                      directory removed at the end)
//
// Without a browser the tests fail: scripts/install-chromium.sh installs
// Debian's chromium.
package console

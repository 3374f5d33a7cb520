// Package leakcheck runs a package's tests and then fails them if a
// goroutine outlived them (go.uber.org/goleak), tolerating only what the
// libraries under Jobbie keep running on purpose. Every package's
// TestMain calls VerifyTestMain, so the list lives in one place.
package leakcheck

import (
	"testing"

	"go.uber.org/goleak"
)

// tolerated are goroutines that outlive every server by design.
var tolerated = []goleak.Option{
	// fasthttp's process-wide Date header refresher, started with the
	// first server and never stopped.
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
	// fasthttp's process-wide DNS cache cleaner of its default dialer.
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*TCPDialer).tcpAddrsClean"),
	// fasthttp's idle-connection reapers sleep out their period after the
	// last connection closed, then exit on their own.
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*Client).mCleaner"),
	// fasthttp's idle-worker reaper notices a stopped server only after
	// its idle sleep (10s, not configurable through fiber), then exits.
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
}

// VerifyTestMain runs m and checks for leaked goroutines; extra tolerates
// more.
func VerifyTestMain(m *testing.M, extra ...goleak.Option) {
	goleak.VerifyTestMain(m, append(append([]goleak.Option(nil), tolerated...), extra...)...)
}

// Find reports goroutines that outlived a package's tests, for a TestMain
// that must stop something of its own after m.Run and before the check.
func Find(extra ...goleak.Option) error {
	return goleak.Find(append(append([]goleak.Option(nil), tolerated...), extra...)...)
}

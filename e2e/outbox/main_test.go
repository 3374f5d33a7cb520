// Package outbox_test is the transactional outbox's fault-injection
// suite against the real binary: an application's rows in SQLite and in
// PostgreSQL relayed by `jobbie outbox relay` subprocesses that are
// killed at each step of a row's relay, the database restarted, and a
// shard leader of a three-node `jobbie dev` cluster killed; every
// committed row must end up enqueued exactly once, and no rolled-back one.
package outbox_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/jobbie/jobbie/outbox/outboxtest"
)

var (
	binary string
	pg     *outboxtest.Postgres // one server for this test binary
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "jobbie-outbox-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if binary, err = devproc.Binary(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if pg, err = outboxtest.StartPostgres(); err != nil {
		fmt.Fprintln(os.Stderr, "outbox e2e:", err)
		os.Exit(1)
	}
	code := m.Run()
	pg.Stop()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

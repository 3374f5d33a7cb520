package control

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/wire"
)

// TestBackupThroughputOfAMillionJobs measures control's part of a large
// backup: a million job records (about 250 bytes each) streamed from the
// shard through control into a directory store, verified as they are
// written, and restored back to a new namespace. Set JOBBIE_BIG=1 to run
// it (make test does not).
func TestBackupThroughputOfAMillionJobs(t *testing.T) {
	if os.Getenv("JOBBIE_BIG") == "" {
		t.Skip("set JOBBIE_BIG=1 to stream a million records")
	}
	w := backupSetup(t)
	w.ns(t, w.tid, "big")
	const n = 1_000_000
	recs := make([]backup.Record, n)
	for i := range recs {
		recs[i] = backup.Record{Kind: 'j', Key: fmt.Appendf(nil, "j/%026d", i),
			Value: fmt.Appendf(nil, `{"id":"job_%026d","queue":"emails.send","state":"completed","payload":{"to":"user%d@example.com","template":"welcome","n":%d},"attempts":1}`, i, i, i)}
	}
	w.shard.put(w.tid, "big", recs...)
	start := time.Now()
	b := w.await(t, w.create(t, "big").ID, ended)
	took := time.Since(start)
	require.Equal(t, wire.BackupCompleted, b.State, b.Error)
	require.Equal(t, int64(n), b.Jobs)
	t.Logf("backup of %d jobs: %s, %d bytes stored", n, took.Round(time.Millisecond), b.Size)

	start = time.Now()
	r := w.gw.do(t, "POST", w.path(w.tid, "/backups/"+b.ID+"/restore"), "", wire.RestoreRequest{TargetNamespace: "big-copy"})
	require.Equal(t, 202, r.status, "body: %s", r.body)
	done := w.await(t, b.ID, restored)
	require.Equal(t, wire.BackupCompleted, done.LastRestore.State, done.LastRestore.Error)
	t.Logf("restore of %d jobs: %s", n, time.Since(start).Round(time.Millisecond))
}

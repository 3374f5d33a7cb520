package control

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/wire"
)

// A stored file that is not the backup its catalog entry describes (a
// valid backup of another tenant swapped in under its id) is never
// restored nor downloaded whole: with the data alone swapped, a restore
// fails with a clear reason and changes nothing (no namespace made, the
// replaced namespace untouched, the pre_restore backup not taken) and a
// download is cut before its end; with the manifest swapped too, both
// are refused at once (409).
func TestRestoreAndDownloadCheckTheCatalogEntry(t *testing.T) {
	t.Parallel()
	w := backupSetup(t)
	w.ns(t, w.tid, "orders")
	w.shard.put(w.tid, "orders", sampleRecords("mine")...)
	mine := w.await(t, w.create(t, "orders").ID, ended)
	require.Equal(t, wire.BackupCompleted, mine.State, mine.Error)

	other := mustTenant(t, w.srv, "globex")
	w.ns(t, other, "orders")
	w.shard.put(other, "orders", sampleRecords("theirs")...)
	r := w.gw.do(t, http.MethodPost, w.path(other, "/backups"), "", wire.CreateBackupRequest{Namespace: "orders"})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	theirsID := decodeAs[wire.Backup](t, r).ID
	require.Eventually(t, func() bool {
		b, err := w.srv.Backup(context.Background(), other, theirsID)
		return err == nil && b.State == wire.BackupCompleted
	}, 20*time.Second, 20*time.Millisecond)

	swap := func(suffix string) {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(w.dir, other, theirsID+suffix))
		require.NoError(t, err)
		// A manifest names its own id: one moved whole would not even read.
		raw = bytes.ReplaceAll(raw, []byte(other+"/"+theirsID), []byte(w.tid+"/"+mine.ID))
		require.NoError(t, os.WriteFile(filepath.Join(w.dir, w.tid, mine.ID+suffix), raw, 0o600))
	}
	swap(".jbk")

	r = w.gw.do(t, http.MethodPost, w.path(w.tid, "/backups/"+mine.ID+"/restore"), "", wire.RestoreRequest{TargetNamespace: "copy"})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	done := w.await(t, mine.ID, restored)
	require.Equal(t, wire.BackupFailed, done.LastRestore.State)
	require.Contains(t, done.LastRestore.Error, "does not match its catalog entry")
	require.NotContains(t, done.LastRestore.Error, other, "another tenant is not named to this one")
	_, err := w.srv.Namespace(context.Background(), w.tid, "copy")
	require.Error(t, err, "the failed restore left no namespace")
	require.Empty(t, w.shard.get(w.tid, "copy"))

	r = w.gw.do(t, http.MethodPost, w.path(w.tid, "/backups/"+mine.ID+"/restore"), "", wire.RestoreRequest{Replace: true})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	pre := decodeAs[wire.Backup](t, r).LastRestore.PreRestoreBackup
	done = w.await(t, mine.ID, restored)
	require.Equal(t, wire.BackupFailed, done.LastRestore.State)
	require.Equal(t, sampleRecords("mine"), w.shard.get(w.tid, "orders"), "the namespace was not replaced")
	preB := w.await(t, pre, ended)
	require.Equal(t, wire.BackupFailed, preB.State, "the pre_restore backup was not taken")

	// The download is cut: before its headers when the whole file fits in
	// one read (this one), else before its end; never received whole.
	req, err := http.NewRequest(http.MethodGet, w.gw.base+w.path(w.tid, "/backups/"+mine.ID+"/download"), nil)
	require.NoError(t, err)
	if resp, err := w.gw.client.Do(req); err == nil {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Error(t, err, "a download of the swapped file ended cleanly (status %d, %d bytes)", resp.StatusCode, len(body))
	}

	swap(".json")
	requireError(t, w.gw.do(t, http.MethodPost, w.path(w.tid, "/backups/"+mine.ID+"/restore"), "", wire.RestoreRequest{TargetNamespace: "copy2"}), 409, "conflict")
	_, err = w.srv.Namespace(context.Background(), w.tid, "copy2")
	require.Error(t, err, "a refused restore made no namespace")
	requireError(t, w.gw.do(t, http.MethodGet, w.path(w.tid, "/backups/"+mine.ID+"/download"), "", nil), 409, "conflict")
}

// The schedules a restore brings count against the plan: control refuses
// (429 quota_exceeded) a restore whose backup holds more schedules than
// the room the gateway counted, before it makes the namespace or
// replaces anything; at the room it goes ahead.
func TestRestoreCountsItsSchedules(t *testing.T) {
	t.Parallel()
	w := backupSetup(t)
	w.ns(t, w.tid, "orders")
	w.shard.put(w.tid, "orders", sampleRecords("a")...) // one schedule
	b := w.await(t, w.create(t, "orders").ID, ended)
	require.Equal(t, wire.BackupCompleted, b.State, b.Error)
	restore := w.path(w.tid, "/backups/"+b.ID+"/restore")
	zero, one := int64(0), int64(1)

	r := w.gw.do(t, http.MethodPost, restore, "", wire.RestoreOrder{RestoreRequest: wire.RestoreRequest{TargetNamespace: "copy"}, ScheduleRoom: &zero})
	requireError(t, r, 429, "quota_exceeded")
	require.Contains(t, string(r.body), "max_schedules")
	_, err := w.srv.Namespace(context.Background(), w.tid, "copy")
	require.Error(t, err, "a refused restore made no namespace")
	r = w.gw.do(t, http.MethodPost, restore, "", wire.RestoreOrder{RestoreRequest: wire.RestoreRequest{Replace: true}, ScheduleRoom: &zero})
	requireError(t, r, 429, "quota_exceeded")
	list := decodeAs[wire.BackupList](t, w.gw.do(t, http.MethodGet, w.path(w.tid, "/backups"), "", nil))
	require.Len(t, list.Backups, 1, "no pre_restore backup was started")

	r = w.gw.do(t, http.MethodPost, restore, "", wire.RestoreOrder{RestoreRequest: wire.RestoreRequest{TargetNamespace: "copy"}, ScheduleRoom: &one})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	done := w.await(t, b.ID, restored)
	require.Equal(t, wire.BackupCompleted, done.LastRestore.State, done.LastRestore.Error)
}

package e2e

import (
	"bufio"
	"bytes"
	bin "encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Backups through the gateway, control and the shard of `jobbie dev`: a
// namespace with jobs in several states, a queue and a schedule is backed
// up, listed, downloaded, restored into a new namespace and backed up
// again with the same records; a replace restore first backs up what it
// replaces; another tenant, a viewer and a key of another namespace get
// only what they may.
func TestBackupAndRestoreThroughTheGateway(t *testing.T) {
	t.Parallel()
	owner, _ := shared.tenant(t)
	_, err := owner.CreateNamespace(ctx(t), "src")
	require.NoError(t, err)
	src := owner.WithNamespace("src")
	fillNamespace(t, src)

	// Backup, catalog, download.
	b := awaitBackup(t, owner, mustBackup(t, owner, "src"), func(b *client.Backup) bool { return b.State != wire.BackupRunning })
	require.Equal(t, wire.BackupCompleted, b.State, "error: %s", b.Error)
	require.Equal(t, int64(4), b.Jobs)
	require.NotZero(t, b.Size)
	require.Len(t, b.Checksum, 64)
	list, err := owner.ListBackups(ctx(t), "src")
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, b.ID, list[0].ID)
	first := download(t, owner, b.ID)
	require.Equal(t, b.Size, int64(len(first)))

	// Restore into a new namespace, then back it up: the same records.
	r, err := owner.RestoreBackup(ctx(t), b.ID, client.RestoreRequest{TargetNamespace: "copy"})
	require.NoError(t, err)
	require.Equal(t, wire.BackupRunning, r.LastRestore.State)
	done := awaitBackup(t, owner, b.ID, restoreEnded)
	require.Equal(t, wire.BackupCompleted, done.LastRestore.State, "error: %s", done.LastRestore.Error)
	require.Equal(t, int64(4), done.LastRestore.Result.Jobs)
	_, err = owner.RestoreBackup(ctx(t), b.ID, client.RestoreRequest{TargetNamespace: "copy"})
	require.True(t, client.IsConflict(err), "the namespace exists now: %v", err)
	again := awaitBackup(t, owner, mustBackup(t, owner, "copy"), func(b *client.Backup) bool { return b.State != wire.BackupRunning })
	require.Equal(t, wire.BackupCompleted, again.State, "error: %s", again.Error)
	require.Equal(t, streamRecords(t, first), streamRecords(t, download(t, owner, again.ID)), "backup → restore → backup: same contents")
	jobs, err := owner.WithNamespace("copy").GetJob(ctx(t), firstJobID(t, src))
	require.NoError(t, err)
	require.Equal(t, "src-0", jobs.Tags["n"])

	// Replace: src changed since; the restore backs it up first (kind
	// pre_restore), then brings the backup's contents back.
	_, err = src.Enqueue(ctx(t), client.EnqueueRequest{Queue: "later", Payload: map[string]int{"x": 1}})
	require.NoError(t, err)
	r, err = owner.RestoreBackup(ctx(t), b.ID, client.RestoreRequest{Replace: true})
	require.NoError(t, err)
	pre := r.LastRestore.PreRestoreBackup
	done = awaitBackup(t, owner, b.ID, restoreEnded)
	require.Equal(t, wire.BackupCompleted, done.LastRestore.State, "error: %s", done.LastRestore.Error)
	preB, err := owner.GetBackup(ctx(t), pre)
	require.NoError(t, err)
	require.Equal(t, wire.BackupPreRestore, preB.Kind)
	require.Equal(t, wire.BackupCompleted, preB.State, "error: %s", preB.Error)
	require.Equal(t, int64(5), preB.Jobs, "the pre_restore backup holds the job enqueued since")
	after := awaitBackup(t, owner, mustBackup(t, owner, "src"), func(b *client.Backup) bool { return b.State != wire.BackupRunning })
	require.Equal(t, streamRecords(t, first), streamRecords(t, download(t, owner, after.ID)), "src is the backup's again")
}

// Another tenant sees none of A's backups (404 on every route); a viewer
// lists and reads but may not take, download or restore; a key limited to
// namespace x sees nothing of y's backups.
func TestBackupAccessThroughTheGateway(t *testing.T) {
	t.Parallel()
	owner, _ := shared.tenant(t)
	other, _ := shared.tenant(t)
	for _, ns := range []string{"x", "y"} {
		_, err := owner.CreateNamespace(ctx(t), ns)
		require.NoError(t, err)
		_, err = owner.WithNamespace(ns).Enqueue(ctx(t), client.EnqueueRequest{Queue: "q", Payload: ns})
		require.NoError(t, err)
	}
	bx := awaitBackup(t, owner, mustBackup(t, owner, "x"), func(b *client.Backup) bool { return b.State != wire.BackupRunning })
	// Access is decided before a backup's state matters: these hold for a
	// completed backup and a failed one alike.
	by := awaitBackup(t, owner, mustBackup(t, owner, "y"), func(b *client.Backup) bool { return b.State != wire.BackupRunning })
	g := shared.gateway + "/api/v1"

	// Tenant B: 404 on every route for A's backup, and an empty catalog.
	_, err := other.GetBackup(ctx(t), by.ID)
	require.True(t, client.IsNotFound(err), "%v", err)
	require.True(t, client.IsNotFound(other.DeleteBackup(ctx(t), by.ID)))
	_, err = other.DownloadBackup(ctx(t), by.ID, io.Discard)
	require.True(t, client.IsNotFound(err), "%v", err)
	_, err = other.RestoreBackup(ctx(t), by.ID, client.RestoreRequest{TargetNamespace: "stolen"})
	require.True(t, client.IsNotFound(err), "%v", err)
	_, err = other.RestoreBackup(ctx(t), by.ID, client.RestoreRequest{Replace: true})
	require.True(t, client.IsNotFound(err), "%v", err)
	list, err := other.ListBackups(ctx(t), "")
	require.NoError(t, err)
	require.Empty(t, list)

	// A viewer: list and get, not create, download, restore or delete.
	viewerKey, err := owner.CreateKey(ctx(t), client.CreateKeyRequest{Name: "v", Role: tenancy.RoleViewer, Namespaces: []string{"*"}})
	require.NoError(t, err)
	viewer := client.New(shared.gateway, viewerKey.Token)
	list, err = viewer.ListBackups(ctx(t), "")
	require.NoError(t, err)
	require.Len(t, list, 2)
	_, err = viewer.GetBackup(ctx(t), by.ID)
	require.NoError(t, err)
	_, err = viewer.CreateBackup(ctx(t), "y")
	require.True(t, client.IsForbidden(err), "%v", err)
	_, err = viewer.DownloadBackup(ctx(t), by.ID, io.Discard)
	require.True(t, client.IsForbidden(err), "%v", err)
	_, err = viewer.RestoreBackup(ctx(t), by.ID, client.RestoreRequest{TargetNamespace: "v-copy"})
	require.True(t, client.IsForbidden(err), "%v", err)
	require.True(t, client.IsForbidden(viewer.DeleteBackup(ctx(t), by.ID)))

	// An admin key limited to x: y's backups do not exist for it.
	xKey, err := owner.CreateKey(ctx(t), client.CreateKeyRequest{Name: "x", Role: tenancy.RoleAdmin, Namespaces: []string{"x"}})
	require.NoError(t, err)
	xc := client.New(shared.gateway, xKey.Token)
	list, err = xc.ListBackups(ctx(t), "")
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, bx.ID, list[0].ID)
	_, err = xc.GetBackup(ctx(t), by.ID)
	require.True(t, client.IsNotFound(err), "%v", err)
	_, err = xc.DownloadBackup(ctx(t), by.ID, io.Discard)
	require.True(t, client.IsNotFound(err), "%v", err)
	_, err = xc.RestoreBackup(ctx(t), bx.ID, client.RestoreRequest{TargetNamespace: "y2"})
	require.Error(t, err, "a key of x may not create namespace y2")
	resp := call(t, "GET", g+"/backups?namespace=y", xKey.Token, nil)
	if resp.Status == http.StatusOK {
		require.JSONEq(t, `{"backups":[]}`, string(resp.Raw), "a key of x lists none of y's backups")
	} else {
		require.Equal(t, http.StatusNotFound, resp.Status, "%s", resp.Raw)
	}
	_, err = xc.GetBackupPolicy(ctx(t), "y")
	require.True(t, client.IsNotFound(err), "%v", err)
}

// A backup policy through the gateway: set, read with its next run, and
// its runs appear in the catalog as scheduled backups.
func TestBackupPolicyThroughTheGateway(t *testing.T) {
	t.Parallel()
	owner, _ := shared.tenant(t)
	_, err := owner.CreateNamespace(ctx(t), "p")
	require.NoError(t, err)
	_, err = owner.PutBackupPolicy(ctx(t), "p", client.BackupPolicyRequest{Cron: "nope", Retention: 1})
	require.True(t, client.IsBadRequest(err), "%v", err)
	pol, err := owner.PutBackupPolicy(ctx(t), "p", client.BackupPolicyRequest{Cron: "@every 1s", Timezone: "Europe/Paris", Retention: 1})
	require.NoError(t, err)
	require.True(t, pol.Enabled)
	require.NotNil(t, pol.NextRunAt)
	eventually(t, 30*time.Second, func() bool {
		list, err := owner.ListBackups(ctx(t), "p")
		require.NoError(t, err)
		return slices.ContainsFunc(list, func(b client.Backup) bool { return b.Kind == wire.BackupScheduled && b.State == wire.BackupCompleted })
	}, "a scheduled backup completes")
	require.NoError(t, owner.DeleteBackupPolicy(ctx(t), "p"))
	_, err = owner.GetBackupPolicy(ctx(t), "p")
	require.True(t, client.IsNotFound(err), "%v", err)
}

// fillNamespace puts jobs in several states, a queue's settings and a
// schedule into c's namespace: pending, scheduled, completed, dead.
func fillNamespace(t *testing.T, c *client.Client) {
	t.Helper()
	desc := "backed up"
	_, err := c.PutQueue(ctx(t), "work", client.QueueSpec{Description: desc})
	require.NoError(t, err)
	_, err = c.CreateSchedule(ctx(t), client.ScheduleRequest{Name: "nightly", Queue: "reports", Cron: "0 3 * * *", Timezone: "Europe/Paris"})
	require.NoError(t, err)
	never := 0
	for i, q := range []string{"work", "work", "pending"} {
		_, err := c.Enqueue(ctx(t), client.EnqueueRequest{Queue: q, Payload: map[string]int{"i": i}, Tags: map[string]string{"n": fmt.Sprintf("src-%d", i)}, MaxRetries: &never})
		require.NoError(t, err)
	}
	_, err = c.Enqueue(ctx(t), client.EnqueueRequest{Queue: "later", Payload: "later", ScheduledAt: time.Now().Add(24 * time.Hour)})
	require.NoError(t, err)
	j, err := c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"work"}, WorkerID: "w", Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.NoError(t, c.Ack(ctx(t), j.ID, map[string]string{"ok": "yes"}))
	j, err = c.Fetch(ctx(t), client.FetchRequest{Queues: []string{"work"}, WorkerID: "w", Timeout: 5 * time.Second})
	require.NoError(t, err)
	_, err = c.Fail(ctx(t), j.ID, "boom", "")
	require.NoError(t, err)
}

// firstJobID is the id of the job tagged n=src-0.
func firstJobID(t *testing.T, c *client.Client) string {
	t.Helper()
	page, err := c.Search(ctx(t), client.SearchRequest{SearchFilter: client.SearchFilter{Tags: map[string]string{"n": "src-0"}}})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	return page.Jobs[0].ID
}

func mustBackup(t *testing.T, c *client.Client, ns string) string {
	t.Helper()
	b, err := c.CreateBackup(ctx(t), ns)
	require.NoError(t, err)
	require.Equal(t, wire.BackupRunning, b.State)
	return b.ID
}

func restoreEnded(b *client.Backup) bool {
	return b.LastRestore != nil && b.LastRestore.State != wire.BackupRunning
}

func awaitBackup(t *testing.T, c *client.Client, id string, cond func(*client.Backup) bool) *client.Backup {
	t.Helper()
	var b *client.Backup
	eventually(t, 60*time.Second, func() bool {
		var err error
		b, err = c.GetBackup(ctx(t), id)
		require.NoError(t, err)
		return cond(b)
	}, "backup "+id)
	return b
}

func download(t *testing.T, c *client.Client, id string) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := c.DownloadBackup(ctx(t), id, &buf)
	require.NoError(t, err)
	return buf.Bytes()
}

// streamRecord is one record of a backup stream.
type streamRecord struct {
	Kind       byte
	Key, Value string
}

// streamRecords reads a backup stream's records as docs/BACKUP-FORMAT.md
// lays them out (the e2e tests read it from the document, not the code):
// zstd, magic, version, header, record frames, the trailer.
func streamRecords(t *testing.T, data []byte) []streamRecord {
	t.Helper()
	zr, err := zstd.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	defer zr.Close()
	r := bufio.NewReader(zr)
	head := make([]byte, 14)
	_, err = io.ReadFull(r, head)
	require.NoError(t, err)
	require.Equal(t, "JBBACKUP", string(head[:8]))
	require.Equal(t, uint16(1), bin.BigEndian.Uint16(head[8:10]))
	_, err = io.CopyN(io.Discard, r, int64(bin.BigEndian.Uint32(head[10:14])))
	require.NoError(t, err)
	var out []streamRecord
	for {
		tag, err := r.ReadByte()
		require.NoError(t, err)
		if tag == 'm' {
			return out
		}
		require.Equal(t, byte('r'), tag)
		kind, err := r.ReadByte()
		require.NoError(t, err)
		kl, err := bin.ReadUvarint(r)
		require.NoError(t, err)
		vl, err := bin.ReadUvarint(r)
		require.NoError(t, err)
		kv := make([]byte, kl+vl)
		if _, err := io.ReadFull(r, kv); err != nil {
			require.NoError(t, errors.Join(errors.New("truncated record"), err))
		}
		out = append(out, streamRecord{Kind: kind, Key: string(kv[:kl]), Value: string(kv[kl:])})
	}
}

// TestBackupOfAMillionJobsThroughTheGateway (JOBBIE_BACKUP_MILLION=1)
// enqueues a million jobs through the gateway, backs the namespace up
// through control into its directory store and restores it into a new
// namespace, logging each step's time (docs/BENCHMARKS.md).
func TestBackupOfAMillionJobsThroughTheGateway(t *testing.T) {
	if os.Getenv("JOBBIE_BACKUP_MILLION") == "" {
		t.Skip("set JOBBIE_BACKUP_MILLION=1 to back up a million jobs")
	}
	owner, _ := shared.tenant(t)
	_, err := owner.CreateNamespace(ctx(t), "big")
	require.NoError(t, err)
	c := owner.WithNamespace("big")
	const batches = 1000 // of wire.MaxBatchJobs
	start := time.Now()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				jobs := make([]client.EnqueueRequest, wire.MaxBatchJobs)
				for j := range jobs {
					n := i*wire.MaxBatchJobs + j
					jobs[j] = client.EnqueueRequest{Queue: "emails", Payload: map[string]any{"to": fmt.Sprintf("user%d@example.com", n), "n": n}}
				}
				_, err := c.EnqueueBatch(ctx(t), client.BatchRequest{Jobs: jobs})
				assert.NoError(t, err)
			}
		})
	}
	for i := range batches {
		next <- i
	}
	close(next)
	wg.Wait()
	t.Logf("enqueued %d jobs in %s", batches*wire.MaxBatchJobs, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	b := awaitBackup(t, owner, mustBackup(t, owner, "big"), func(b *client.Backup) bool { return b.State != wire.BackupRunning })
	took := time.Since(start)
	require.Equal(t, wire.BackupCompleted, b.State, b.Error)
	require.Equal(t, int64(batches*wire.MaxBatchJobs), b.Jobs)
	t.Logf("backup: %s, %d records, %d bytes stored", took.Round(time.Millisecond), b.Records, b.Size)
	require.Less(t, took, time.Minute)

	start = time.Now()
	_, err = owner.RestoreBackup(ctx(t), b.ID, client.RestoreRequest{TargetNamespace: "big-copy"})
	require.NoError(t, err)
	done := awaitBackup(t, owner, b.ID, restoreEnded)
	require.Equal(t, wire.BackupCompleted, done.LastRestore.State, done.LastRestore.Error)
	t.Logf("restore into a new namespace: %s", time.Since(start).Round(time.Millisecond))
}

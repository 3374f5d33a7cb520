package control

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/wire"
)

// Backups kept in an S3-compatible bucket (gofakes3 over a real TLS socket):
// taken, listed in the bucket under the tenant, downloaded and restored.
func TestBackupToAnS3Store(t *testing.T) {
	t.Parallel()
	mem := s3mem.New()
	require.NoError(t, mem.CreateBucket("backups"))
	// Over TLS, as in production: minio-go then sends plain bodies (over
	// HTTP it signs aws-chunked ones, which gofakes3 would keep as sent).
	s3 := httptest.NewTLSServer(gofakes3.New(mem).Server())
	t.Cleanup(s3.Close)
	roots := x509.NewCertPool()
	roots.AddCert(s3.Certificate())
	store, err := backup.NewS3Store(backup.S3Config{Endpoint: strings.TrimPrefix(s3.URL, "https://"), Bucket: "backups",
		Prefix: "jobbie/", AccessKey: "access", SecretKey: "secret", Region: "us-east-1", TLS: true, RootCAs: roots})
	require.NoError(t, err)
	w := backupSetup(t, func(c *Config) { c.BackupStore = store })
	w.ns(t, w.tid, "orders")
	w.shard.put(w.tid, "orders", sampleRecords("a")...)

	b := w.await(t, w.create(t, "orders").ID, ended)
	require.Equal(t, wire.BackupCompleted, b.State, b.Error)
	ms, err := store.List(context.Background(), w.tid+"/")
	require.NoError(t, err)
	require.Len(t, ms, 1)
	require.Equal(t, w.tid+"/"+b.ID, ms[0].ID)
	require.Equal(t, b.Size, ms[0].StoredBytes)
	_, err = w.store.Manifest(context.Background(), w.tid+"/"+b.ID)
	require.ErrorIs(t, err, backup.ErrNotFound, "nothing in the directory store the setup made")

	dl := w.gw.do(t, http.MethodGet, w.path(w.tid, "/backups/"+b.ID+"/download"), "", nil)
	require.Equal(t, http.StatusOK, dl.status, "body: %s", dl.body)
	require.Equal(t, sampleRecords("a"), records(t, dl.body))
	r := w.gw.do(t, http.MethodPost, w.path(w.tid, "/backups/"+b.ID+"/restore"), "", wire.RestoreRequest{TargetNamespace: "copy"})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	done := w.await(t, b.ID, restored)
	require.Equal(t, wire.BackupCompleted, done.LastRestore.State, done.LastRestore.Error)
	require.Equal(t, sampleRecords("a"), w.shard.get(w.tid, "copy"))

	require.Equal(t, http.StatusNoContent, w.gw.do(t, http.MethodDelete, w.path(w.tid, "/backups/"+b.ID), "", nil).status)
	ms, err = store.List(context.Background(), w.tid+"/")
	require.NoError(t, err)
	require.Empty(t, ms)
}

package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// The backup methods send what the API takes, decode what it answers, and
// a download streams the body as it comes.
func TestBackupMethods(t *testing.T) {
	t.Parallel()
	type call struct{ method, path, body string }
	var calls []call
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		calls = append(calls, call{r.Method, r.URL.RequestURI(), string(bytes.TrimSpace(body))})
		switch {
		case r.URL.Path == "/api/v1/backups/bkp_gone":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(wire.ErrorBody{Error: &wire.Error{Code: "not_found", Message: "backup \"bkp_gone\" not found"}})
		case r.URL.Path == "/api/v1/backups/bkp_1/download":
			w.Header().Set("Content-Type", wire.BackupContentType)
			_, _ = w.Write([]byte("JBBACKUP-bytes"))
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case r.URL.Path == "/api/v1/backups" && r.Method == http.MethodGet:
			_ = json.NewEncoder(w).Encode(wire.BackupList{Backups: []wire.Backup{{ID: "bkp_1", Namespace: "orders", State: "completed"}}})
		case r.URL.Path == "/api/v1/namespaces/orders/backup-policy":
			_ = json.NewEncoder(w).Encode(wire.BackupPolicy{Namespace: "orders", Cron: "@daily", Timezone: "UTC", Retention: 7, Enabled: true})
		default:
			w.WriteHeader(http.StatusAccepted)
			_ = json.NewEncoder(w).Encode(wire.Backup{ID: "bkp_1", Namespace: "orders", State: "running"})
		}
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, "key")
	ctx := context.Background()

	b, err := c.CreateBackup(ctx, "orders")
	require.NoError(t, err)
	require.Equal(t, "running", b.State)
	list, err := c.ListBackups(ctx, "orders")
	require.NoError(t, err)
	require.Len(t, list, 1)
	_, err = c.GetBackup(ctx, "bkp_gone")
	require.True(t, client.IsNotFound(err), "%v", err)
	var buf bytes.Buffer
	n, err := c.DownloadBackup(ctx, "bkp_1", &buf)
	require.NoError(t, err)
	require.Equal(t, int64(14), n)
	require.Equal(t, "JBBACKUP-bytes", buf.String())
	_, err = c.DownloadBackup(ctx, "bkp_gone/x", io.Discard)
	require.Error(t, err)
	_, err = c.RestoreBackup(ctx, "bkp_1", client.RestoreRequest{Replace: true})
	require.NoError(t, err)
	require.NoError(t, c.DeleteBackup(ctx, "bkp_1"))
	off := false
	p, err := c.PutBackupPolicy(ctx, "orders", client.BackupPolicyRequest{Cron: "@daily", Retention: 7, Enabled: &off})
	require.NoError(t, err)
	require.Equal(t, 7, p.Retention)
	_, err = c.GetBackupPolicy(ctx, "orders")
	require.NoError(t, err)
	require.NoError(t, c.DeleteBackupPolicy(ctx, "orders"))

	require.Equal(t, []call{
		{"POST", "/api/v1/backups", `{"namespace":"orders"}`},
		{"GET", "/api/v1/backups?namespace=orders", ""},
		{"GET", "/api/v1/backups/bkp_gone", ""},
		{"GET", "/api/v1/backups/bkp_1/download", ""},
		{"GET", "/api/v1/backups/bkp_gone%2Fx/download", ""},
		{"POST", "/api/v1/backups/bkp_1/restore", `{"replace":true}`},
		{"DELETE", "/api/v1/backups/bkp_1", ""},
		{"PUT", "/api/v1/namespaces/orders/backup-policy", `{"cron":"@daily","retention":7,"enabled":false}`},
		{"GET", "/api/v1/namespaces/orders/backup-policy", ""},
		{"DELETE", "/api/v1/namespaces/orders/backup-policy", ""},
	}, calls)
}

package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/gateway/internal/controlfake"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Another tenant's backup does not exist for a key of this one, on every
// route, and its catalog is empty.
func TestBackupsOfAnotherTenantAreNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.control.AddBackup(tenantA, "emails")
	other := b.signer.Sign(claimsFor(tenantB, "key_b", tenancy.RoleOwner, "*"))

	b.do(t, http.MethodGet, "/api/v1/backups/"+id, other, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodDelete, "/api/v1/backups/"+id, other, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodGet, "/api/v1/backups/"+id+"/download", other, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodPost, "/api/v1/backups/"+id+"/restore", other, map[string]any{"target_namespace": "stolen"}).
		requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodPost, "/api/v1/backups/"+id+"/restore", other, map[string]any{"replace": true}).
		requireError(t, http.StatusNotFound, apierr.NotFound)
	r := b.do(t, http.MethodGet, "/api/v1/backups", other, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.JSONEq(t, `{"backups":[]}`, string(r.body))
	st := b.control.BackupState()
	require.Empty(t, st.Restores)
	require.Empty(t, st.Deleted)
}

// A viewer lists and reads backups; it may not take, download, restore or
// delete one.
func TestBackupsForAViewer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.control.AddBackup(tenantA, "emails")
	b.control.AddBackup(tenantA, "default")
	viewer := b.key(t, tenancy.RoleViewer, "*")

	var list wire.BackupList
	r := b.do(t, http.MethodGet, "/api/v1/backups", viewer, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	r.decode(t, &list)
	require.Len(t, list.Backups, 2)
	require.Equal(t, []string(nil), b.control.BackupState().Queries[0], "a key of every namespace lists them all")
	r = b.do(t, http.MethodGet, "/api/v1/backups/"+id, viewer, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)

	b.do(t, http.MethodPost, "/api/v1/backups", viewer, map[string]any{"namespace": "emails"}).requireError(t, http.StatusForbidden, apierr.Forbidden)
	b.do(t, http.MethodGet, "/api/v1/backups/"+id+"/download", viewer, nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	b.do(t, http.MethodPost, "/api/v1/backups/"+id+"/restore", viewer, map[string]any{"target_namespace": "copy"}).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
	b.do(t, http.MethodDelete, "/api/v1/backups/"+id, viewer, nil).requireError(t, http.StatusForbidden, apierr.Forbidden)
	b.do(t, http.MethodPut, "/api/v1/namespaces/emails/backup-policy", viewer, map[string]any{"cron": "@daily", "retention": 3}).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
	st := b.control.BackupState()
	require.Empty(t, st.Restores)
	require.Empty(t, st.Deleted)
	require.Empty(t, st.Policies)
}

// A key limited to namespace emails sees nothing of default's backups:
// control is asked for emails' only, and default's are not found.
func TestBackupsForAKeyOfOneNamespace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	mine := b.control.AddBackup(tenantA, "emails")
	theirs := b.control.AddBackup(tenantA, "default")
	admin := b.key(t, tenancy.RoleAdmin, "emails")

	var list wire.BackupList
	r := b.do(t, http.MethodGet, "/api/v1/backups", admin, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	r.decode(t, &list)
	require.Len(t, list.Backups, 1)
	require.Equal(t, mine, list.Backups[0].ID)
	require.Equal(t, [][]string{{"emails"}}, b.control.BackupState().Queries, "the key's namespaces go to control")

	r = b.do(t, http.MethodGet, "/api/v1/backups?namespace=default", admin, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.JSONEq(t, `{"backups":[]}`, string(r.body))
	require.Len(t, b.control.BackupState().Queries, 1, "a namespace beyond the key's is not asked for")
	b.do(t, http.MethodGet, "/api/v1/backups?namespace=Bad!", admin, nil).requireError(t, http.StatusBadRequest, apierr.BadRequest)

	for _, rq := range []struct{ method, path string }{
		{http.MethodGet, "/api/v1/backups/" + theirs},
		{http.MethodDelete, "/api/v1/backups/" + theirs},
		{http.MethodGet, "/api/v1/backups/" + theirs + "/download"},
		{http.MethodPost, "/api/v1/backups/" + theirs + "/restore"},
		{http.MethodGet, "/api/v1/namespaces/default/backup-policy"},
		{http.MethodPut, "/api/v1/namespaces/default/backup-policy"},
	} {
		var body any
		if rq.method != http.MethodGet && rq.method != http.MethodDelete {
			body = map[string]any{}
			if strings.HasSuffix(rq.path, "/restore") {
				body = map[string]any{"replace": true}
			} else {
				body = map[string]any{"cron": "@daily", "retention": 1}
			}
		}
		e := b.do(t, rq.method, rq.path, admin, body).requireError(t, http.StatusNotFound, apierr.NotFound)
		require.NotContains(t, e.Message, "emails", "%s %s", rq.method, rq.path)
	}
	b.do(t, http.MethodPost, "/api/v1/backups", admin, map[string]any{"namespace": "default"}).
		requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodPost, "/api/v1/backups/"+mine+"/restore", admin, map[string]any{"target_namespace": "elsewhere"}).
		requireError(t, http.StatusForbidden, apierr.Forbidden)
	st := b.control.BackupState()
	require.Empty(t, st.Restores)
	require.Empty(t, st.Deleted)
	require.Empty(t, st.Policies)
}

// The owner takes, restores, downloads and deletes a backup and sets a
// policy; bad input is refused before control is asked.
func TestBackupLifecycle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	owner := b.key(t, tenancy.RoleOwner, "*")

	var bk wire.Backup
	r := b.do(t, http.MethodPost, "/api/v1/backups", owner, map[string]any{"namespace": "emails"})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	r.decode(t, &bk)
	require.Equal(t, "emails", bk.Namespace)
	require.Equal(t, wire.BackupRunning, bk.State)
	b.do(t, http.MethodPost, "/api/v1/backups", owner, map[string]any{"namespace": "Bad Name"}).requireError(t, http.StatusBadRequest, apierr.BadRequest)
	b.do(t, http.MethodPost, "/api/v1/backups", owner, map[string]any{"namespace": "emails", "x": 1}).requireError(t, http.StatusBadRequest, apierr.BadRequest)
	b.do(t, http.MethodPost, "/api/v1/backups", owner, map[string]any{"namespace": "nope"}).requireError(t, http.StatusNotFound, apierr.NotFound)
	b.do(t, http.MethodGet, "/api/v1/backups/whatever", owner, nil).requireError(t, http.StatusNotFound, apierr.NotFound)

	r = b.do(t, http.MethodPost, "/api/v1/backups/"+bk.ID+"/restore", owner, map[string]any{"target_namespace": "copy"})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	r.decode(t, &bk)
	require.Equal(t, "copy", bk.LastRestore.TargetNamespace)
	e := b.do(t, http.MethodPost, "/api/v1/backups/"+bk.ID+"/restore", owner, map[string]any{"target_namespace": "Bad Name"}).
		requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Equal(t, "target_namespace", e.Field)
	require.Equal(t, []wire.RestoreOrder{{RestoreRequest: wire.RestoreRequest{TargetNamespace: "copy"}}}, b.control.BackupState().Restores)
	// A developer may read backups but not manage them.
	b.do(t, http.MethodPost, "/api/v1/backups/"+bk.ID+"/restore", b.key(t, tenancy.RoleDeveloper, "*"), map[string]any{"replace": true}).
		requireError(t, http.StatusForbidden, apierr.Forbidden)

	r = b.do(t, http.MethodGet, "/api/v1/backups/"+bk.ID+"/download", owner, nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, "0123456789abcdef", string(r.body))
	require.Equal(t, wire.BackupContentType, r.header.Get("Content-Type"))
	require.Equal(t, "16", r.header.Get("Content-Length"))
	require.Contains(t, r.header.Get("Content-Disposition"), bk.ID+".jbk")

	r = b.do(t, http.MethodDelete, "/api/v1/backups/"+bk.ID, owner, nil)
	require.Equal(t, http.StatusNoContent, r.status, "body: %s", r.body)
	b.do(t, http.MethodGet, "/api/v1/backups/"+bk.ID, owner, nil).requireError(t, http.StatusNotFound, apierr.NotFound)

	pol := "/api/v1/namespaces/emails/backup-policy"
	b.do(t, http.MethodGet, pol, owner, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
	e = b.do(t, http.MethodPut, pol, owner, map[string]any{"retention": 1}).requireError(t, http.StatusBadRequest, apierr.BadRequest)
	require.Equal(t, "cron", e.Field, "control's refusal reaches the client as it was")
	r = b.do(t, http.MethodPut, pol, owner, map[string]any{"cron": "@daily", "retention": 2})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	r = b.do(t, http.MethodGet, pol, b.key(t, tenancy.RoleViewer, "emails"), nil)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var p wire.BackupPolicy
	r.decode(t, &p)
	require.Equal(t, "@daily", p.Cron)
	require.Equal(t, http.StatusNoContent, b.do(t, http.MethodDelete, pol, owner, nil).status)
	b.do(t, http.MethodGet, pol, owner, nil).requireError(t, http.StatusNotFound, apierr.NotFound)
}

// A download reaches the client as control sends it, not once control is
// done, and lasts longer than the gateway's write timeout as long as
// every write is quick.
func TestBackupDownloadStreams(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.WriteTimeout = 300 * time.Millisecond })
	id := b.control.AddBackup(tenantA, "emails")
	chunk := strings.Repeat("x", 64<<10)
	const chunks = 16
	firstSeen := make(chan struct{})
	b.control.SetBackups(func(fb *controlfake.Backups) {
		fb.Body = func(w io.Writer) {
			_, _ = io.WriteString(w, chunk)
			select { // the rest only once the client has the first chunk
			case <-firstSeen:
			case <-time.After(10 * time.Second):
				return
			}
			for range chunks - 1 {
				time.Sleep(50 * time.Millisecond) // 750 ms in all: past the write timeout
				_, _ = io.WriteString(w, chunk)
			}
		}
	})
	req, err := http.NewRequest(http.MethodGet, b.base+"/api/v1/backups/"+id+"/download", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+b.key(t, tenancy.RoleOwner, "*"))
	resp, err := b.http.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	first := make([]byte, len(chunk))
	_, err = io.ReadFull(resp.Body, first)
	require.NoError(t, err, "the first chunk arrives while control still holds the rest")
	close(firstSeen)
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, (chunks-1)*len(chunk), len(rest))
}

// Control's 503 (no leader, an election) reaches the client with
// control's code and Retry-After.
func TestControlUnavailablePassesThrough(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.control.AddBackup(tenantA, "emails")
	b.control.SetBackups(func(fb *controlfake.Backups) { fb.Unhealthy = true })
	owner := b.key(t, tenancy.RoleOwner, "*")
	for _, path := range []string{"/api/v1/backups", "/api/v1/backups/" + id} {
		r := b.do(t, http.MethodGet, path, owner, nil)
		r.requireError(t, http.StatusServiceUnavailable, apierr.NoLeader)
		require.Equal(t, "3", r.header.Get("Retry-After"))
	}
}

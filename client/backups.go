package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/jobbie/jobbie/wire"
)

// Backups of a namespace (wire/backups.go): the catalog, taking,
// downloading and restoring them, and each namespace's backup policy.
type (
	Backup              = wire.Backup
	BackupRestore       = wire.BackupRestore
	RestoreResult       = wire.RestoreResult
	BackupPolicy        = wire.BackupPolicy
	BackupPolicyRequest = wire.BackupPolicyRequest
	RestoreRequest      = wire.RestoreRequest
)

func backupPath(id string) string { return "/api/v1/backups/" + url.PathEscape(id) }

// CreateBackup starts a backup of namespace ns. It answers at once with
// the backup running; GetBackup shows when it completed or failed.
func (c *Client) CreateBackup(ctx context.Context, ns string) (*Backup, error) {
	var out Backup
	if _, err := c.do(ctx, "POST", "/api/v1/backups", wire.CreateBackupRequest{Namespace: ns}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListBackups lists the backups the key may read, newest first; only
// namespace ns's when ns is not empty.
func (c *Client) ListBackups(ctx context.Context, ns string) ([]Backup, error) {
	path := "/api/v1/backups"
	if ns != "" {
		path += "?namespace=" + url.QueryEscape(ns)
	}
	var out wire.BackupList
	if _, err := c.do(ctx, "GET", path, nil, &out); err != nil {
		return nil, err
	}
	return out.Backups, nil
}

// GetBackup returns one backup, with its latest restore. Another
// tenant's, or one of a namespace the key may not use, is not found.
func (c *Client) GetBackup(ctx context.Context, id string) (*Backup, error) {
	var out Backup
	if _, err := c.do(ctx, "GET", backupPath(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteBackup deletes a backup that is neither running nor being restored.
func (c *Client) DeleteBackup(ctx context.Context, id string) error {
	_, err := c.do(ctx, "DELETE", backupPath(id), nil, nil)
	return err
}

// DownloadBackup writes a completed backup's stream (docs/BACKUP-FORMAT.md)
// to w as it arrives and returns the bytes written.
func (c *Client) DownloadBackup(ctx context.Context, id string, w io.Writer) (int64, error) {
	return c.download(ctx, backupPath(id)+"/download", wire.BackupContentType, w)
}

// download GETs path accepting accept (errors still come as JSON) and
// copies the body to w as it arrives, checking its length.
func (c *Client) download(ctx context.Context, path, accept string, w io.Writer) (int64, error) {
	req, err := c.newRequest(ctx, "GET", path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", accept+", application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("jobbie: GET %s: %w", path, err)
	}
	defer drain(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return 0, parseError(resp)
	}
	n, err := io.Copy(w, resp.Body)
	if err == nil && resp.ContentLength >= 0 && n != resp.ContentLength {
		err = fmt.Errorf("jobbie: GET %s: got %d of %d bytes", path, n, resp.ContentLength)
	}
	return n, err
}

// RestoreBackup starts restoring a completed backup: into a new namespace
// (req.TargetNamespace, which it creates), or over the backup's own
// namespace (req.Replace), which is backed up first (kind pre_restore).
// It answers with the backup, its LastRestore running; GetBackup shows
// how the restore ends.
func (c *Client) RestoreBackup(ctx context.Context, id string, req RestoreRequest) (*Backup, error) {
	var out Backup
	if _, err := c.do(ctx, "POST", backupPath(id)+"/restore", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func backupPolicyPath(ns string) string { return namespacePath(ns) + "/backup-policy" }

// GetBackupPolicy returns namespace ns's backup policy; one it has not is
// not found.
func (c *Client) GetBackupPolicy(ctx context.Context, ns string) (*BackupPolicy, error) {
	var out BackupPolicy
	if _, err := c.do(ctx, "GET", backupPolicyPath(ns), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PutBackupPolicy sets namespace ns's backup policy.
func (c *Client) PutBackupPolicy(ctx context.Context, ns string, req BackupPolicyRequest) (*BackupPolicy, error) {
	var out BackupPolicy
	if _, err := c.do(ctx, "PUT", backupPolicyPath(ns), req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteBackupPolicy removes namespace ns's backup policy; its backups stay.
func (c *Client) DeleteBackupPolicy(ctx context.Context, ns string) error {
	_, err := c.do(ctx, "DELETE", backupPolicyPath(ns), nil, nil)
	return err
}

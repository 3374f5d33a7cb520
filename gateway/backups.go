package gateway

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Backups of a namespace (wire/backups.go), served through control's
// internal API. Control knows a backup's namespace; the gateway decides
// whether the key may see it: a backup of a namespace beyond the key's is
// not found, as another tenant's is (control answers 404 for those), so
// its existence never shows.

// backupDownloadLimit bounds a whole download, as control bounds its side.
const backupDownloadLimit = time.Hour

func backupsPath(r *call, rest string) string { return tenantPath(r.key.TenantID, "/backups"+rest) }

func backupIDPath(r *call, id, rest string) string {
	return backupsPath(r, "/"+url.PathEscape(id)+rest)
}

func backupNotFound(id string) error { return apierr.New(apierr.NotFound, "backup %q not found", id) }

func (s *Server) createBackup(c *fiber.Ctx, r *call) error {
	var in wire.CreateBackupRequest
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	if err := tenancy.ValidateNamespace(in.Namespace); err != nil {
		return apierr.Field("namespace", "%v", err)
	}
	if !r.key.AllowsNamespace(in.Namespace) {
		return namespaceNotFound(in.Namespace)
	}
	if err := s.authorizeIn(r, in.Namespace, tenancy.ActBackupManage); err != nil {
		return err
	}
	var b wire.Backup
	if err := s.controlJSON(r, http.MethodPost, backupsPath(r, ""), in, http.StatusAccepted, &b); err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(b)
}

// listBackups lists the backups of the namespaces the key may use (and,
// with ?namespace=, of those named), then keeps those its role may read.
// A limited key's namespaces go to control as repeated ?namespace=, so
// control never sends the others.
func (s *Server) listBackups(c *fiber.Ctx, r *call) error {
	var asked []string
	for _, v := range c.Context().QueryArgs().PeekMulti("namespace") {
		ns := string(v)
		if err := tenancy.ValidateNamespace(ns); err != nil {
			return apierr.Field("namespace", "%v", err)
		}
		asked = append(asked, ns)
	}
	var send []string
	switch {
	case len(asked) > 0:
		for _, ns := range asked {
			if r.key.AllowsNamespace(ns) {
				send = append(send, ns)
			}
		}
		if len(send) == 0 {
			return c.JSON(wire.BackupList{Backups: []wire.Backup{}})
		}
	case !r.key.AllowsNamespace(tenancy.AllNamespaces):
		send = r.key.Namespaces
	}
	q := url.Values{"namespace": send}
	path := backupsPath(r, "")
	if len(send) > 0 {
		path += "?" + q.Encode()
	}
	var list wire.BackupList
	if err := s.controlJSON(r, http.MethodGet, path, nil, http.StatusOK, &list); err != nil {
		return err
	}
	out := wire.BackupList{Backups: make([]wire.Backup, 0, len(list.Backups))}
	for _, b := range list.Backups {
		if !r.key.AllowsNamespace(b.Namespace) {
			continue // control was asked for the key's namespaces only: this is belt and braces
		}
		ok, err := s.allowedIn(r, b.Namespace, tenancy.ActBackupRead)
		if err != nil {
			return err
		}
		if ok {
			out.Backups = append(out.Backups, b)
		}
	}
	return c.JSON(out)
}

// namedBackup reads the backup the path names from control and checks the
// key may act on it: one of a namespace beyond the key's is not found; the
// role needs act in the backup's namespace.
func (s *Server) namedBackup(c *fiber.Ctx, r *call, act tenancy.Action) (wire.Backup, error) {
	id := strings.Clone(c.Params("id"))
	if !strings.HasPrefix(id, wire.BackupIDPrefix) || len(id) > 64 {
		return wire.Backup{}, backupNotFound(id)
	}
	var b wire.Backup
	if err := s.controlJSON(r, http.MethodGet, backupIDPath(r, id, ""), nil, http.StatusOK, &b); err != nil {
		return b, err
	}
	if !r.key.AllowsNamespace(b.Namespace) {
		return b, backupNotFound(id)
	}
	return b, s.authorizeIn(r, b.Namespace, act)
}

func (s *Server) getBackup(c *fiber.Ctx, r *call) error {
	b, err := s.namedBackup(c, r, tenancy.ActBackupRead)
	if err != nil {
		return err
	}
	return c.JSON(b)
}

func (s *Server) deleteBackup(c *fiber.Ctx, r *call) error {
	b, err := s.namedBackup(c, r, tenancy.ActBackupManage)
	if err != nil {
		return err
	}
	if _, err := s.controlCall(r, http.MethodDelete, backupIDPath(r, b.ID, ""), nil, http.StatusNoContent); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// restoreBackup needs backup.manage on the backup's namespace; a restore
// into a new namespace creates it, so it needs namespace.manage there, in
// a namespace the key may use.
func (s *Server) restoreBackup(c *fiber.Ctx, r *call) error {
	var in wire.RestoreRequest
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	b, err := s.namedBackup(c, r, tenancy.ActBackupManage)
	if err != nil {
		return err
	}
	if in.TargetNamespace != "" {
		if err := tenancy.ValidateNamespace(in.TargetNamespace); err != nil {
			return apierr.Field("target_namespace", "%v", err)
		}
		if !r.key.AllowsNamespace(in.TargetNamespace) {
			return apierr.New(apierr.Forbidden, "API key %s may not use namespace %q, so it may not restore into it", r.key.Subject, in.TargetNamespace)
		}
		if err := s.authorizeIn(r, in.TargetNamespace, tenancy.ActNamespaceManage); err != nil {
			return err
		}
	}
	var out wire.Backup
	if err := s.controlJSON(r, http.MethodPost, backupIDPath(r, b.ID, "/restore"), in, http.StatusAccepted, &out); err != nil {
		return err
	}
	if in.TargetNamespace != "" {
		// Drop a cached "no such namespace" so the new one is usable at once.
		s.placements.invalidate(r.key.TenantID, in.TargetNamespace)
	}
	return c.Status(fiber.StatusAccepted).JSON(out)
}

// downloadBackup streams the backup from control to the client as it
// arrives, never holding it whole. Each write to the client gets
// WriteTimeout (a stalled client is cut off), the download as a whole
// backupDownloadLimit.
func (s *Server) downloadBackup(c *fiber.Ctx, r *call) error {
	b, err := s.namedBackup(c, r, tenancy.ActBackupManage)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(s.ctx, backupDownloadLimit)
	resp, err := s.control.open(ctx, backupIDPath(r, b.ID, "/download"), r.requestID)
	if err != nil {
		cancel()
		s.log.Warn("gateway: control download failed", "backup", b.ID, "request_id", r.requestID, "err", err)
		return apierr.Retry(apierr.Unavailable, 1, "the control plane is unavailable; retry shortly")
	}
	if resp.StatusCode != http.StatusOK { // an error answer: short, judged as any other
		defer cancel()
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxControlBody))
		return s.controlAnswer(r, http.MethodGet, "/download", controlReply{status: resp.StatusCode,
			contentType: resp.Header.Get("Content-Type"), retryAfter: resp.Header.Get("Retry-After"), body: body})
	}
	out := c.Response()
	out.Header.SetContentType(wire.BackupContentType)
	out.Header.Set(fiber.HeaderContentDisposition, `attachment; filename="`+b.ID+`.jbk"`)
	if v := resp.Header.Get("X-Jobbie-Backup-Size"); v != "" {
		out.Header.Set("X-Jobbie-Backup-Size", v)
	}
	size := -1 // chunked when control did not say
	if resp.ContentLength >= 0 {
		size = int(resp.ContentLength)
	}
	// fasthttp closes the stream once sent, or when the client is gone.
	c.Context().SetBodyStream(&deadlineReader{body: resp.Body, cancel: cancel, conn: c.Context().Conn(),
		timeout: s.cfg.WriteTimeout}, size)
	return nil
}

// deadlineReader is control's download body as fasthttp reads it to send
// on: before each read it gives the connection WriteTimeout again, so the
// write that follows has its own deadline rather than the response's.
type deadlineReader struct {
	body    io.ReadCloser
	cancel  context.CancelFunc
	conn    net.Conn
	timeout time.Duration
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	if d.timeout > 0 {
		_ = d.conn.SetWriteDeadline(time.Now().Add(d.timeout)) // a socket deadline: wall clock
	}
	return d.body.Read(p)
}

func (d *deadlineReader) Close() error {
	defer d.cancel()
	return d.body.Close()
}

// Backup policies are about a namespace the path names.

func backupPolicyPath(r *call, ns string) string { return namespacePath(r, ns) + "/backup-policy" }

func (s *Server) getBackupPolicy(c *fiber.Ctx, r *call) error {
	ns, err := s.namedNamespace(c, r, tenancy.ActBackupRead)
	if err != nil {
		return err
	}
	var p wire.BackupPolicy
	if err := s.controlJSON(r, http.MethodGet, backupPolicyPath(r, ns), nil, http.StatusOK, &p); err != nil {
		return err
	}
	return c.JSON(p)
}

func (s *Server) putBackupPolicy(c *fiber.Ctx, r *call) error {
	var in wire.BackupPolicyRequest
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	ns, err := s.namedNamespace(c, r, tenancy.ActBackupManage)
	if err != nil {
		return err
	}
	var p wire.BackupPolicy
	if err := s.controlJSON(r, http.MethodPut, backupPolicyPath(r, ns), in, http.StatusOK, &p); err != nil {
		return err
	}
	return c.JSON(p)
}

func (s *Server) deleteBackupPolicy(c *fiber.Ctx, r *call) error {
	ns, err := s.namedNamespace(c, r, tenancy.ActBackupManage)
	if err != nil {
		return err
	}
	if _, err := s.controlCall(r, http.MethodDelete, backupPolicyPath(r, ns), nil, http.StatusNoContent); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// retryAfterSeconds reads a Retry-After in seconds (1 when absent or not
// a count of seconds).
func retryAfterSeconds(v string) int {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return n
	}
	return 1
}

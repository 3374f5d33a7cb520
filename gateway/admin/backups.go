package admin

import (
	"context"
	"io"
	"net"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Backups of a namespace (wire/backups.go), served through control.
// Control knows a backup's namespace; the gateway decides whether the key
// may see it: a backup of a namespace beyond the key's is not found, as
// another tenant's is (control answers 404 for those), so its existence
// never shows.

// backupDownloadLimit bounds a whole download, as control bounds its side.
const backupDownloadLimit = time.Hour

func backupNotFound(id string) error { return apierr.New(apierr.NotFound, "backup %q not found", id) }

func (a *Admin) CreateBackup(c *fiber.Ctx, r *admitted.Request) error {
	var in wire.CreateBackupRequest
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	if err := tenancy.ValidateNamespace(in.Namespace); err != nil {
		return apierr.Field("namespace", "%v", err)
	}
	if !r.Key.AllowsNamespace(in.Namespace) {
		return namespaceNotFound(in.Namespace)
	}
	if err := a.gate.AuthorizeIn(r, in.Namespace, tenancy.ActBackupManage); err != nil {
		return err
	}
	ctx, idem := a.keyed(r)
	b, err := a.control.CreateBackup(ctx, r.RequestID, r.Key.TenantID, in)
	if err != nil {
		return a.tell(r, err)
	}
	return created(c, idem, fiber.StatusAccepted, b)
}

// ListBackups lists the backups of the namespaces the key may use (and,
// with ?namespace=, of those named), then keeps those its role may read.
// A limited key's namespaces go to control, so control never sends the
// others.
func (a *Admin) ListBackups(c *fiber.Ctx, r *admitted.Request) error {
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
			if r.Key.AllowsNamespace(ns) {
				send = append(send, ns)
			}
		}
		if len(send) == 0 {
			return c.JSON(wire.BackupList{Backups: []wire.Backup{}})
		}
	case !r.Key.AllowsNamespace(tenancy.AllNamespaces):
		send = r.Key.Namespaces
	}
	list, err := a.control.ListBackups(a.ctx, r.RequestID, r.Key.TenantID, send)
	if err != nil {
		return a.tell(r, err)
	}
	out := wire.BackupList{Backups: make([]wire.Backup, 0, len(list.Backups))}
	for _, b := range list.Backups {
		if !r.Key.AllowsNamespace(b.Namespace) {
			continue // control was asked for the key's namespaces only: this is belt and braces
		}
		ok, err := a.gate.AllowedIn(r, b.Namespace, tenancy.ActBackupRead)
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
func (a *Admin) namedBackup(c *fiber.Ctx, r *admitted.Request, act tenancy.Action) (wire.Backup, error) {
	id := strings.Clone(c.Params("id"))
	if !strings.HasPrefix(id, wire.BackupIDPrefix) || len(id) > 64 {
		return wire.Backup{}, backupNotFound(id)
	}
	b, err := a.control.Backup(a.ctx, r.RequestID, r.Key.TenantID, id)
	if err != nil {
		return b, a.tell(r, err)
	}
	if !r.Key.AllowsNamespace(b.Namespace) {
		return b, backupNotFound(id)
	}
	return b, a.gate.AuthorizeIn(r, b.Namespace, act)
}

func (a *Admin) GetBackup(c *fiber.Ctx, r *admitted.Request) error {
	b, err := a.namedBackup(c, r, tenancy.ActBackupRead)
	if err != nil {
		return err
	}
	return c.JSON(b)
}

func (a *Admin) DeleteBackup(c *fiber.Ctx, r *admitted.Request) error {
	b, err := a.namedBackup(c, r, tenancy.ActBackupManage)
	if err != nil {
		return err
	}
	if err := a.control.DeleteBackup(a.ctx, r.RequestID, r.Key.TenantID, b.ID); err != nil {
		return a.tell(r, err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// RestoreBackup needs backup.manage on the backup's namespace; a restore
// into a new namespace creates it, so it needs namespace.manage there, in
// a namespace the key may use.
func (a *Admin) RestoreBackup(c *fiber.Ctx, r *admitted.Request) error {
	var in wire.RestoreRequest
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	b, err := a.namedBackup(c, r, tenancy.ActBackupManage)
	if err != nil {
		return err
	}
	if in.TargetNamespace != "" {
		if err := tenancy.ValidateNamespace(in.TargetNamespace); err != nil {
			return apierr.Field("target_namespace", "%v", err)
		}
		if !r.Key.AllowsNamespace(in.TargetNamespace) {
			return apierr.New(apierr.Forbidden, "API key %s may not use namespace %q, so it may not restore into it", r.Key.Subject, in.TargetNamespace)
		}
		if err := a.gate.AuthorizeIn(r, in.TargetNamespace, tenancy.ActNamespaceManage); err != nil {
			return err
		}
	}
	replaced := ""
	if in.Replace {
		replaced = b.Namespace
	}
	var out wire.Backup
	err = a.schedules.Restore(r, replaced, func(room *int64) error {
		var err error
		out, err = a.control.RestoreBackup(a.ctx, r.RequestID, r.Key.TenantID, b.ID, wire.RestoreOrder{RestoreRequest: in, ScheduleRoom: room})
		return a.tell(r, err)
	})
	if err != nil {
		return err
	}
	if in.TargetNamespace != "" {
		// Drop a cached "no such namespace" so the new one is usable at once.
		a.proxy.Invalidate(r.Key.TenantID, in.TargetNamespace)
	}
	return c.Status(fiber.StatusAccepted).JSON(out)
}

// DownloadBackup streams the backup from control to the client as it
// arrives, never holding it whole. Each write to the client gets
// WriteTimeout (a stalled client is cut off), the download as a whole
// backupDownloadLimit.
func (a *Admin) DownloadBackup(c *fiber.Ctx, r *admitted.Request) error {
	b, err := a.namedBackup(c, r, tenancy.ActBackupManage)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(a.ctx, backupDownloadLimit)
	d, err := a.control.DownloadBackup(ctx, r.RequestID, r.Key.TenantID, b.ID)
	if err != nil {
		cancel()
		return a.tell(r, err)
	}
	out := c.Response()
	out.Header.SetContentType(wire.BackupContentType)
	out.Header.Set(fiber.HeaderContentDisposition, `attachment; filename="`+b.ID+`.jbk"`)
	if d.Size != "" {
		out.Header.Set("X-Jobbie-Backup-Size", d.Size)
	}
	size := -1 // chunked when control did not say
	if d.Length >= 0 {
		size = int(d.Length)
	}
	// fasthttp closes the stream once sent, or when the client is gone.
	c.Context().SetBodyStream(&deadlineReader{body: d.Body, cancel: cancel, conn: c.Context().Conn(),
		timeout: a.writeTimeout}, size)
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

func (a *Admin) GetBackupPolicy(c *fiber.Ctx, r *admitted.Request) error {
	ns, err := a.namedNamespace(c, r, tenancy.ActBackupRead)
	if err != nil {
		return err
	}
	p, err := a.control.BackupPolicy(a.ctx, r.RequestID, r.Key.TenantID, ns)
	if err != nil {
		return a.tell(r, err)
	}
	return c.JSON(p)
}

func (a *Admin) PutBackupPolicy(c *fiber.Ctx, r *admitted.Request) error {
	var in wire.BackupPolicyRequest
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	ns, err := a.namedNamespace(c, r, tenancy.ActBackupManage)
	if err != nil {
		return err
	}
	p, err := a.control.PutBackupPolicy(a.ctx, r.RequestID, r.Key.TenantID, ns, in)
	if err != nil {
		return a.tell(r, err)
	}
	return c.JSON(p)
}

func (a *Admin) DeleteBackupPolicy(c *fiber.Ctx, r *admitted.Request) error {
	ns, err := a.namedNamespace(c, r, tenancy.ActBackupManage)
	if err != nil {
		return err
	}
	if err := a.control.DeleteBackupPolicy(a.ctx, r.RequestID, r.Key.TenantID, ns); err != nil {
		return a.tell(r, err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

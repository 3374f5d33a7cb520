package api

import (
	"bytes"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/wire"
)

// The tenant's backups on the internal API, for gateways (which check the
// caller's role and namespaces first; see wire/backups.go for the public
// routes these serve). A list names the namespaces it is limited to in
// repeated ?namespace= parameters.

func (s *Server) backupRoutes(app fiber.Router, gw fiber.Handler) {
	app.Post("/internal/v1/tenants/:tid/backups", gw, s.postBackup)
	app.Get("/internal/v1/tenants/:tid/backups", gw, s.getBackups)
	app.Get("/internal/v1/tenants/:tid/backups/:id", gw, s.getBackup)
	app.Delete("/internal/v1/tenants/:tid/backups/:id", gw, s.deleteBackup)
	app.Get("/internal/v1/tenants/:tid/backups/:id/download", gw, s.downloadBackup)
	app.Post("/internal/v1/tenants/:tid/backups/:id/restore", gw, s.postRestore)
	app.Get("/internal/v1/tenants/:tid/namespaces/:ns/backup-policy", gw, s.getBackupPolicy)
	app.Put("/internal/v1/tenants/:tid/namespaces/:ns/backup-policy", gw, s.putBackupPolicy)
	app.Delete("/internal/v1/tenants/:tid/namespaces/:ns/backup-policy", gw, s.deleteBackupPolicy)
}

// downloadWriteTimeout bounds a backup download (the server's usual write
// timeout is 10s): at 10 MB/s, 36 GB.
const downloadWriteTimeout = time.Hour

// isDownload reports whether a request is a backup download.
func isDownload(h *fasthttp.RequestHeader) bool {
	p := h.RequestURI()
	if i := bytes.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return h.IsGet() && bytes.HasPrefix(p, []byte("/internal/v1/tenants/")) && bytes.HasSuffix(p, []byte("/download"))
}

func (s *Server) postBackup(c *fiber.Ctx) error {
	var req wire.CreateBackupRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	b, err := s.CreateBackup(c.UserContext(), c.Params("tid"), req.Namespace)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(b)
}

func (s *Server) getBackups(c *fiber.Ctx) error {
	var namespaces []string
	for _, v := range c.Context().QueryArgs().PeekMulti("namespace") {
		namespaces = append(namespaces, string(v))
	}
	list, err := s.Backups(c.UserContext(), c.Params("tid"), namespaces)
	if err != nil {
		return err
	}
	return c.JSON(wire.BackupList{Backups: list})
}

func (s *Server) getBackup(c *fiber.Ctx) error {
	b, err := s.Backup(c.UserContext(), c.Params("tid"), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(b)
}

func (s *Server) deleteBackup(c *fiber.Ctx) error {
	if err := s.DeleteBackup(c.UserContext(), c.Params("tid"), c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// downloadBackup streams the stored backup as it is read from the store.
func (s *Server) downloadBackup(c *fiber.Ctx) error {
	id := c.Params("id")
	rc, size, err := s.OpenBackup(c.UserContext(), c.Params("tid"), id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, wire.BackupContentType)
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+id+`.jbk"`)
	c.Set("X-Jobbie-Backup-Size", strconv.FormatInt(size, 10))
	return c.SendStream(rc, int(size)) // fasthttp closes rc once sent
}

func (s *Server) postRestore(c *fiber.Ctx) error {
	var req wire.RestoreOrder
	if err := decode(c, &req); err != nil {
		return err
	}
	b, err := s.RestoreBackup(c.UserContext(), c.Params("tid"), c.Params("id"), req)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(b)
}

func (s *Server) getBackupPolicy(c *fiber.Ctx) error {
	p, err := s.BackupPolicy(c.UserContext(), c.Params("tid"), c.Params("ns"))
	if err != nil {
		return err
	}
	return c.JSON(p)
}

func (s *Server) putBackupPolicy(c *fiber.Ctx) error {
	var req wire.BackupPolicyRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	p, err := s.PutBackupPolicy(c.UserContext(), c.Params("tid"), c.Params("ns"), req)
	if err != nil {
		return err
	}
	return c.JSON(p)
}

func (s *Server) deleteBackupPolicy(c *fiber.Ctx) error {
	if err := s.DeleteBackupPolicy(c.UserContext(), c.Params("tid"), c.Params("ns")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

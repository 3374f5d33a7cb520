package console

import (
	"embed"
	"fmt"
	"io/fs"
	"mime"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/gateway/admission"
	"github.com/jobbie/jobbie/gateway/sso"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
)

//go:embed all:dist
var embedded embed.FS

const (
	consolePrefix = "/console/"
	// CSP is the Content-Security-Policy of every console answer.
	CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
		"frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
	// CacheForever is the Cache-Control of the front end's assets.
	CacheForever = "public, max-age=31536000, immutable" // file names under assets/ carry their content's hash
)

// Config configures the console.
type Config struct {
	Gate  *admission.Gate
	Clock clockwork.Clock
	// Limit holds a session request to its tenant's rate limits, as any
	// API request of the tenant (nil: none).
	Limit func(c *fiber.Ctx, k *tenancy.KeyClaims) error
	// SignInLimit holds the unauthenticated steps of sign-in through an
	// identity provider to a rate per client address and per tenant
	// (tenant empty: not known yet); nil: none.
	SignInLimit func(c *fiber.Ctx, tenant string) error
	// Dir serves the front end from this directory (a `vite build`
	// output) instead of the embedded one; Dist from this file system
	// (tests). Both empty: the embedded build.
	Dir  string
	Dist fs.FS
	// SSO signs people in through their tenant's identity provider; nil:
	// sign-in with an API key only.
	SSO *sso.RP
	// PublicURL is the gateway's address as browsers reach it (the
	// provider's redirect URI is under it); empty: each request's own
	// scheme and host.
	PublicURL string
}

// Console serves the console: its front end and its sessions.
type Console struct {
	gate  *admission.Gate
	clock clockwork.Clock
	limit func(c *fiber.Ctx, k *tenancy.KeyClaims) error
	// signInLimit: Config.SignInLimit
	signInLimit func(c *fiber.Ctx, tenant string) error
	files       map[string]consoleFile // the built front end; nil when not built

	sso       *sso.RP
	publicURL string
}

// New loads the front end, once.
func New(cfg Config) (*Console, error) {
	files, err := embeddedConsole()
	dist := cfg.Dist
	if cfg.Dir != "" && dist == nil {
		if _, serr := os.Stat(filepath.Join(cfg.Dir, "index.html")); serr != nil {
			return nil, fmt.Errorf("gateway: console directory %s has no index.html (build it with npm run build)", cfg.Dir)
		}
		dist = os.DirFS(cfg.Dir)
	}
	if dist != nil {
		files, err = consoleFiles(dist)
	}
	if err != nil {
		return nil, fmt.Errorf("gateway: console: %w", err)
	}
	limit := cfg.Limit
	if limit == nil {
		limit = func(*fiber.Ctx, *tenancy.KeyClaims) error { return nil }
	}
	signInLimit := cfg.SignInLimit
	if signInLimit == nil {
		signInLimit = func(*fiber.Ctx, string) error { return nil }
	}
	return &Console{gate: cfg.Gate, clock: cfg.Clock, limit: limit, signInLimit: signInLimit, files: files, sso: cfg.SSO,
		publicURL: cfg.PublicURL}, nil
}

// consoleFile is one file of the built front end.
type consoleFile struct {
	body        []byte
	contentType string
}

// consoleFiles loads the built front end by path relative to dist; nil
// when it is not built (no index.html). Dot files are not served.
func consoleFiles(dist fs.FS) (map[string]consoleFile, error) {
	if _, err := fs.Stat(dist, "index.html"); err != nil {
		return nil, nil
	}
	files := map[string]consoleFile{}
	err := fs.WalkDir(dist, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		body, err := fs.ReadFile(dist, p)
		if err != nil {
			return err
		}
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		files[p] = consoleFile{body: body, contentType: ct}
		return nil
	})
	return files, err
}

// embeddedConsole is the front end built into the binary.
func embeddedConsole() (map[string]consoleFile, error) {
	dist, err := fs.Sub(embedded, "dist")
	if err != nil {
		return nil, err
	}
	return consoleFiles(dist)
}

// Register mounts / (a redirect), the session endpoints (sso.go: sign-in
// through the tenant's identity provider) and the front end.
func (s *Console) Register(app *fiber.App) {
	app.Get("/", func(c *fiber.Ctx) error { return c.Redirect(consolePrefix, fiber.StatusFound) })
	con := app.Group("/console", consoleHeaders)
	con.Post("/api/session", s.signIn)
	con.Get("/api/session", s.showSession)
	con.Delete("/api/session", s.signOut)
	con.Get("/api/sso/start", s.startSSO)
	con.Get("/api/sso/callback", s.ssoCallback)
	con.All("/api/*", func(c *fiber.Ctx) error {
		return apierr.New(apierr.NotFound, "no console endpoint %s %s", c.Method(), c.Path())
	})
	con.Get("/*", s.serveConsole)
}

// consoleHeaders goes on every console answer, errors included.
func consoleHeaders(c *fiber.Ctx) error {
	h := &c.Response().Header
	h.Set(fiber.HeaderContentSecurityPolicy, CSP)
	h.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	h.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	h.Set(fiber.HeaderCacheControl, "no-store")
	return c.Next()
}

// serveConsole answers a file of the front end; any other path (a screen
// of client-side routing) is index.html, except under assets/, where a
// missing file is a 404 rather than a page in place of a script.
func (s *Console) serveConsole(c *fiber.Ctx) error {
	p := c.Path()
	if p == "/console" { // routing is not strict: /console reaches here too
		return c.Redirect(consolePrefix, fiber.StatusFound)
	}
	if s.files == nil {
		c.Type("html", "utf-8")
		return c.SendString(consoleNotBuilt)
	}
	rel := strings.TrimPrefix(p, consolePrefix)
	if f, ok := s.files[rel]; ok && fs.ValidPath(rel) && rel != "index.html" {
		if strings.HasPrefix(rel, "assets/") {
			c.Set(fiber.HeaderCacheControl, CacheForever)
		} else {
			c.Set(fiber.HeaderCacheControl, "no-cache")
		}
		c.Set(fiber.HeaderContentType, f.contentType)
		return c.Send(f.body)
	}
	if strings.HasPrefix(rel, "assets/") {
		return apierr.New(apierr.NotFound, "no console asset %s", rel)
	}
	index := s.files["index.html"]
	c.Set(fiber.HeaderContentType, index.contentType)
	return c.Send(index.body)
}

// consoleNotBuilt is /console/ in a binary built without the front end.
// It has no inline style or script: the CSP forbids both.
const consoleNotBuilt = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Jobbie console: not built</title>
</head>
<body>
<main>
<h1>The Jobbie console's front end is not built</h1>
<p>This <code>jobbie</code> binary was built without the console's front end
(a plain <code>go build</code>), so there is nothing to show here yet. The API
under <code>/api/v1</code> works as usual.</p>
<p>To get the console, build the binary with <code>make build</code> in the
Jobbie repository: it builds the front end in <code>gateway/console</code> with
<code>npm ci</code> (Node.js and npm) and embeds it in <code>bin/jobbie</code>.</p>
</main>
</body>
</html>
`

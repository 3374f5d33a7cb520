package obs

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/listen"
	"github.com/jobbie/jobbie/internal/pki"
)

// Listener serves /metrics on its own address over mutual TLS, to
// scrapers (pki.Scrapers), for a role whose main port is public.
type Listener struct {
	app  *fiber.App
	ln   net.Listener
	done chan error
}

// Listen starts serving on addr ("127.0.0.1:0" picks a port); group is
// told while it cannot accept (nil: no one).
func Listen(addr string, creds *pki.Credentials, group *listen.Group) (*Listener, error) {
	if creds == nil {
		return nil, errors.New("obs: a metrics listener needs TLS credentials")
	}
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("obs: metrics listen: %w", err)
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true, ErrorHandler: apierr.Handler})
	app.Use(apierr.RequestID)
	app.Get("/metrics", pki.Require(pki.Scrapers, nil), Serve())
	rl := listen.New(tcp, listen.Config{Name: "metrics", Group: group})
	l := &Listener{app: app, ln: apierr.QuietListener(tls.NewListener(rl, creds.Server(pki.Scrapers))), done: make(chan error, 1)}
	go func() { l.done <- app.Listener(l.ln) }()
	return l, nil
}

// Addr is where it listens.
func (l *Listener) Addr() string { return l.ln.Addr().String() }

// Close stops serving.
func (l *Listener) Close() error {
	err := l.app.Shutdown()
	_ = l.ln.Close()
	<-l.done
	return err
}

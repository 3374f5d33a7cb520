package control

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
)

// serveFakeShard serves h as shard id on a free port, over mutual TLS
// that admits only control, until the test ends, and returns its address.
// release, if not nil, runs first at the end: it lets go of requests the
// fake holds, so the server can shut down.
func serveFakeShard(t *testing.T, ca *pkitest.CA, id pki.Identity, h http.Handler, release func()) string {
	t.Helper()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)} // refused handshakes are some tests' point
	ln := tls.NewListener(tcp, ca.Creds(t, id).Server(pki.Roles(pki.RoleControl)))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("fake shard: %v", err)
		}
	}()
	t.Cleanup(func() {
		if release != nil {
			release()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = srv.Close()
		<-done
	})
	return tcp.Addr().String()
}

// readFakeStream reads and verifies a whole backup stream, as a shard
// does before it applies any of it, and returns its records.
func readFakeStream(body io.Reader) ([]backup.Record, error) {
	rd, err := backup.NewReader(body)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var recs []backup.Record
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return nil, err
		}
		recs = append(recs, backup.Record{Kind: rec.Kind, Key: bytes.Clone(rec.Key), Value: bytes.Clone(rec.Value)})
	}
}

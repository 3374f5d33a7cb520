package console

import (
	"fmt"
	"io"
	"net/http"

	"github.com/jobbie/jobbie/e2e/internal/devproc"
	"github.com/jobbie/jobbie/e2e/internal/freeport"
)

// devServer is the running `jobbie dev`, with its addresses under the
// names the tests use.
type devServer struct {
	*devproc.Dev
	dir                   string
	gateway, control      string // base URLs: http:// for the gateway, https:// for control
	ownerKey, operatorKey string // of tenant "default" and of the operator
	ops                   *http.Client
}

// launch starts `jobbie dev` on fresh loopback ports (with a tunnel
// listener for self-hosted shards), with its front end from consoleDir
// when set, allowed to push to loopback handlers, and to sign people in
// through loopback identity providers, whose certificate is
// receiverCA's, and waits until it says it is running.
func launch(dir, consoleDir, receiverCA string) (*devServer, error) {
	ports, err := freeport.Loopback(4)
	if err != nil {
		return nil, err
	}
	flags := []string{"--push-allow-private", "--sso-allow-private"}
	if consoleDir != "" {
		flags = append(flags, "--console-dir", consoleDir)
	}
	d, err := devproc.StartDev(binary, devproc.Config{Dir: dir, Addr: ports[0], ControlAddr: ports[1], ShardAddr: ports[2],
		TunnelAddr: ports[3], Flags: flags, Env: []string{"SSL_CERT_FILE=" + receiverCA}})
	if err != nil {
		return nil, err
	}
	return &devServer{Dev: d, dir: d.Dir, gateway: d.Gateway, control: d.Control, ownerKey: d.OwnerKey,
		operatorKey: d.OperatorKey, ops: d.Ops}, nil
}

// stop ends the process gracefully and waits for it.
func (d *devServer) stop() { d.Stop() }

func (d *devServer) printLogTail(w io.Writer, n int) {
	fmt.Fprintf(w, "--- last lines of the jobbie dev log:\n%s\n---\n", d.LogTail(n))
}

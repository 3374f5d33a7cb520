package selfhosted

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/wire"
)

// Joining is what a node joins with: the tenant's token, control's https
// URLs, the hosted service's CA (control's and the gateways'), and the
// tunnel listeners to keep in its record instead of control's (none:
// control's).
type Joining struct {
	Token       string
	ControlURLs []string
	CAFile      string
	Tunnels     []string
}

// Open joins node nodeID on first start, or loads what an earlier join
// stored; a token given again is not used, and warn says so.
func Open(ctx context.Context, dataDir, nodeID string, j Joining, warn io.Writer) (*pki.Credentials, *Record, error) {
	if !Joined(dataDir) {
		if err := Join(ctx, dataDir, nodeID, j); err != nil {
			return nil, nil, err
		}
	} else if j.Token != "" {
		fmt.Fprintln(warn, "jobbie shard: this node joined before; --join-token is not used again")
	}
	return Load(dataDir, nodeID)
}

// Join trades the token for a certificate of a key made here (the key
// never leaves the node) and stores them, 0600, with the control URLs it
// joined at, where it renews the certificate later.
func Join(ctx context.Context, dataDir, nodeID string, j Joining) error {
	if j.Token == "" || len(j.ControlURLs) == 0 || j.CAFile == "" {
		return errors.New("joining needs --join-token, --control-url https://… and --ca-file (the hosted service's CA)")
	}
	for _, u := range j.ControlURLs {
		if !strings.HasPrefix(u, "https://") {
			return fmt.Errorf("--control-url %q: control is reached over TLS (https://)", u)
		}
	}
	hostedCA, err := os.ReadFile(j.CAFile)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(hostedCA) {
		return fmt.Errorf("--ca-file %s holds no certificate", j.CAFile)
	}
	// The identity is control's to decide: the request names none.
	csr, key, err := pki.NewCSR(pki.Identity{}, nil)
	if err != nil {
		return err
	}
	cc := controlClient(j.ControlURLs, roots)
	defer cc.Close()
	var res wire.JoinResponse
	req := wire.JoinRequest{Token: j.Token, NodeID: nodeID, CSR: string(csr)}
	if err := postControl(ctx, cc, "/control/v1/join", req, http.StatusCreated, &res); err != nil {
		return fmt.Errorf("join: %w", err)
	}
	if len(j.Tunnels) > 0 {
		res.TunnelURLs = j.Tunnels
	}
	record, _ := json.Marshal(Record{JoinResponse: wire.JoinResponse{ShardID: res.ShardID, NodeID: res.NodeID, TenantID: res.TenantID,
		TunnelURLs: res.TunnelURLs}, ControlURLs: j.ControlURLs})
	if err := os.MkdirAll(filepath.Dir(File(dataDir, RecordFile)), 0o700); err != nil {
		return err
	}
	// The record last: its presence says the rest is there.
	for _, f := range []struct {
		name string
		data []byte
	}{{KeyFile, key}, {CertFile, []byte(res.Certificate)}, {TrustFile, append([]byte(res.CA+"\n"), hostedCA...)}, {RecordFile, record}} {
		if err := writeSecretFile(File(dataDir, f.name), string(f.data)); err != nil {
			return err
		}
	}
	return nil
}

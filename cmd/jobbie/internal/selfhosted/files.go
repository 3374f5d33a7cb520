package selfhosted

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jobbie/jobbie/internal/atomicfile"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/wire"
)

// A self-hosted node keeps what joining gave it in <data-dir>/selfhosted:
// its key and certificate, the CAs it trusts (the self-hosted CA for its
// peers, the hosted CA of --ca-file for control and the gateways), and
// who it is and where to dial. A restart reuses them: no token again.
const (
	RecordFile = "join.json"
	CertFile   = "node.crt"
	KeyFile    = "node.key"
	TrustFile  = "ca.crt"
)

// File is the path of the file name in dataDir's selfhosted directory.
func File(dataDir, name string) string { return filepath.Join(dataDir, "selfhosted", name) }

// Joined reports whether the node of dataDir joined: its record is
// written last, so its presence says the rest is there.
func Joined(dataDir string) bool { return exists(File(dataDir, RecordFile)) }

// Record is <data-dir>/selfhosted/join.json: who the node is, where it
// dials its tunnels, and the control URLs it joined at, where it renews
// (records from before renewal lack them: --control-url then).
type Record struct {
	wire.JoinResponse
	ControlURLs []string `json:"control_urls,omitempty"`
}

// Tunnels are the tunnel listeners the node dials: those given (--tunnel),
// else those control named at join.
func (r *Record) Tunnels(given []string) []string { return givenOr(given, r.TunnelURLs) }

// Controls are the control URLs the node renews at: those given
// (--control-url), else those it joined at.
func (r *Record) Controls(given []string) []string { return givenOr(given, r.ControlURLs) }

func givenOr(given, stored []string) []string {
	if len(given) > 0 {
		return given
	}
	return stored
}

// Load reads what node nodeID's join stored in dataDir: its record and
// its credentials.
func Load(dataDir, nodeID string) (*pki.Credentials, *Record, error) {
	var r Record
	b, err := os.ReadFile(File(dataDir, RecordFile))
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("self-hosted join record: %w", err)
	}
	if r.NodeID != nodeID {
		return nil, nil, fmt.Errorf("this data directory is node %s of shard %s, not node %s", r.NodeID, r.ShardID, nodeID)
	}
	creds, err := LoadCredentials(dataDir)
	if err != nil {
		return nil, nil, err
	}
	return creds, &r, nil
}

// LoadCredentials reads the node's certificate, key and trusted CAs.
func LoadCredentials(dataDir string) (*pki.Credentials, error) {
	return pki.LoadCredentials(File(dataDir, CertFile), File(dataDir, KeyFile), File(dataDir, TrustFile))
}

// writeSecretFile writes atomically and durably with owner-only
// permissions.
func writeSecretFile(path, content string) error {
	return atomicfile.Write(path, []byte(content+"\n"), 0o600)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

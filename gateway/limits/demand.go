package limits

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobbie/jobbie/internal/obs"
	"github.com/jobbie/jobbie/internal/pki"
)

// Demand reports on the wire. The gossip pool's key encrypts every
// datagram, but whoever holds it could otherwise speak for a gateway, and
// a forged report of great demand for a tenant shrinks every gateway's
// share of its limit to nothing. So each report is signed by the sending
// gateway's key and carries its certificate: a receiver takes it only
// from a gateway certificate of the CA, for the gossip member that sent
// it, and only once (each carries the sender's clock, later than the
// last; a replay or an old report counts for nothing).
//
//	envelope: version (2) | uvarint len(cert) cert | uvarint len(sig) sig | uvarint seq | body
//	signed:   demandPurpose, uvarint len(from) from | uvarint seq | body
//	body:     bodyVersion (1) | per tenant: uvarint len(id) id, uvarint rps×100, uvarint eps×100

const (
	envelopeVersion = 2
	bodyVersion     = 1
	// demandPurpose is what a demand signature is for (pki.Sign).
	demandPurpose = "jobbie gateway rate demand"
	// maxSigLen bounds a signature: ASN.1 ECDSA P-256 is at most 72 bytes;
	// room for the keys pki could issue.
	maxSigLen = 256
	// badSignersPerInterval bounds the unknown certificates a gateway
	// checks per sync interval: a forger with the pool key cannot make it
	// spend its packet goroutine verifying chains.
	badSignersPerInterval = 16
)

// errNotAGateway is a report signed by anything but a hosted gateway.
var errNotAGateway = errors.New("limits: demand not signed by a gateway")

// demandSigner seals and opens demand reports with a gateway's
// credentials, and remembers what each sender said last.
type demandSigner struct {
	creds    *pki.Credentials
	verifier *pki.Verifier

	// rateSync.mu guards these.
	last     map[string]uint64 // gossip member → the newest seq taken from it
	failures int               // signatures refused this interval
}

func newDemandSigner(creds *pki.Credentials) *demandSigner {
	if creds == nil {
		return nil
	}
	return &demandSigner{creds: creds, verifier: creds.Verifier(), last: map[string]uint64{}}
}

// bodySize is how much of a message of size bytes is left for the body.
func (s *demandSigner) bodySize(size int) int {
	return size - 1 - 2*binary.MaxVarintLen32 - len(s.creds.CertificateDER()) - maxSigLen - binary.MaxVarintLen64
}

// seal wraps body, sent by the member named from, with seq.
func (s *demandSigner) seal(from string, seq uint64, body []byte) ([]byte, error) {
	cert, sig, err := s.creds.Sign(demandPurpose, signedDemand(from, seq, body))
	if err != nil {
		return nil, err
	}
	msg := appendChunk([]byte{envelopeVersion}, cert)
	msg = appendChunk(msg, sig)
	msg = binary.AppendUvarint(msg, seq)
	return append(msg, body...), nil
}

// open checks a message from the member named from and returns its seq
// and body.
func (s *demandSigner) open(from string, msg []byte, now time.Time) (uint64, []byte, error) {
	if len(msg) == 0 || msg[0] != envelopeVersion {
		return 0, nil, errors.New("limits: not a demand envelope")
	}
	b := msg[1:]
	cert, b, ok := chunk(b, math.MaxUint16)
	if !ok {
		return 0, nil, errors.New("limits: malformed certificate")
	}
	sig, b, ok := chunk(b, maxSigLen)
	if !ok {
		return 0, nil, errors.New("limits: malformed signature")
	}
	seq, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, nil, errors.New("limits: malformed sequence")
	}
	body := b[k:]
	id, err := s.verifier.Verify(demandPurpose, cert, signedDemand(from, seq, body), sig, now)
	if err != nil {
		return 0, nil, err
	}
	if id.Role != pki.RoleGateway || id.Tenant != "" {
		return 0, nil, fmt.Errorf("%w: %s", errNotAGateway, id)
	}
	return seq, body, nil
}

// signedDemand is what a demand signature covers: the sender's gossip
// name (a report cannot be replayed as another member's), its seq and
// the body.
func signedDemand(from string, seq uint64, body []byte) []byte {
	b := binary.AppendUvarint(nil, uint64(len(from)))
	b = append(b, from...)
	b = binary.AppendUvarint(b, seq)
	return append(b, body...)
}

// appendChunk appends part with its length, as chunk reads it.
func appendChunk(b, part []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(part))), part...)
}

// chunk reads a uvarint length of at most limit and that many bytes.
func chunk(b []byte, limit uint64) (part, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > limit || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}

// encodeDemand packs a report into bodies of at most size bytes: a
// version byte, then per tenant its id's length and id, and its demands
// in hundredths, as uvarints.
func encodeDemand(report []demandReport, size int) [][]byte {
	var msgs [][]byte
	msg := []byte{bodyVersion}
	for _, d := range report {
		e := appendChunk(nil, []byte(d.tid))
		e = binary.AppendUvarint(e, centi(d.rps))
		e = binary.AppendUvarint(e, centi(d.eps))
		if len(msg)+len(e) > size && len(msg) > 1 {
			msgs = append(msgs, msg)
			msg = []byte{bodyVersion}
		}
		msg = append(msg, e...)
	}
	return append(msgs, msg)
}

func centi(v float64) uint64 { return uint64(math.Round(min(max(v, 0), 1e15) * 100)) }

// decodeDemand reads a body; false for one of another version or
// malformed.
func decodeDemand(b []byte) ([]demandReport, bool) {
	if len(b) == 0 || b[0] != bodyVersion {
		return nil, false
	}
	b = b[1:]
	var out []demandReport
	for len(b) > 0 {
		tid, rest, ok := chunk(b, uint64(len(b)))
		if !ok {
			return nil, false
		}
		rps, k1 := binary.Uvarint(rest)
		if k1 <= 0 {
			return nil, false
		}
		eps, k2 := binary.Uvarint(rest[k1:])
		if k2 <= 0 {
			return nil, false
		}
		b = rest[k1+k2:]
		out = append(out, demandReport{tid: string(tid), rps: float64(rps) / 100, eps: float64(eps) / 100})
	}
	return out, true
}

// demandRefused counts demand reports dropped: forged, replayed, from
// another role, malformed, or over the interval's budget of checks.
var demandRefused = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "jobbie_gateway_rate_demand_refused_total",
	Help: "Rate-limit demand reports from the gossip pool refused: not signed by a gateway, replayed, or malformed.",
})

func init() { obs.Registry.MustRegister(demandRefused) }

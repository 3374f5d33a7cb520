package service

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"slices"
	"time"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/wire"
)

// Renewing a self-hosted node's certificate. A node joined once, with a
// token; from then on its certificate is its credential, so it renews
// with the certificate itself, before it expires:
//
//   - the certificate must chain to the self-hosted CA and be valid now.
//     No grace after expiry: an expired certificate is one the gateways
//     and the node's peers already refuse, and a node that let it lapse
//     (the hosted side unreachable for the last third of its life) is
//     treated as one whose key may have outlived its owner's care;
//   - the request (CSR) must carry the certificate's own public key and
//     be signed by it: whoever asks holds the node's private key, not
//     just its certificate, which is public (every handshake shows it).
//     A replayed request gains nothing either: what it yields is a
//     certificate for a key only the node holds;
//   - the certificate's shard must still be a self-hosted shard of the
//     tenant it names, in the replicated state, with the node among its
//     joined nodes: a revoked shard or a node control does not list is
//     refused (403), and nothing is issued;
//   - the request may name nothing but that identity, as at join.
//
// The new certificate is for exactly the same identity and key, valid
// Config.SelfHostedCertValidity from now. Nothing is written to the
// replicated state: renewal changes no record, so it needs no quorum
// beyond the leader's current view (the gate forwards it to the leader,
// which sees a revocation as soon as it is applied).

// Renew issues a joined self-hosted node a new certificate for its
// identity and key, on the proof of its current one.
func (s *Service) Renew(ctx context.Context, req wire.RenewRequest) (wire.RenewResponse, error) {
	ca := s.cfg.SelfHostedCA
	if ca == nil {
		return wire.RenewResponse{}, apierr.New(apierr.Unavailable, "this control plane does not admit self-hosted shards (no self-hosted CA configured)")
	}
	for _, f := range []struct{ name, v string }{{"certificate", req.Certificate}, {"csr", req.CSR}} {
		if f.v == "" {
			return wire.RenewResponse{}, apierr.Field(f.name, "%s is required (PEM)", f.name)
		}
		if len(f.v) > wire.MaxRenewPEMBytes {
			return wire.RenewResponse{}, apierr.OfField(apierr.TooLarge, f.name, "%s is %d bytes; at most %d", f.name, len(f.v), wire.MaxRenewPEMBytes)
		}
	}
	cert, err := parseOneCert(req.Certificate)
	if err != nil {
		return wire.RenewResponse{}, apierr.Field("certificate", "%v", err)
	}
	csr, err := pki.ParseCSR([]byte(req.CSR))
	if err != nil {
		return wire.RenewResponse{}, apierr.Field("csr", "%v", err)
	}

	now := s.cfg.Clock.Now()
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		if now.After(cert.NotAfter) && cert.CheckSignatureFrom(ca.Cert) == nil {
			return wire.RenewResponse{}, apierr.OfField(apierr.Unauthenticated, "certificate",
				"the certificate expired at %s and cannot be renewed: the node must join again with a new token", cert.NotAfter.UTC().Format(time.RFC3339))
		}
		return wire.RenewResponse{}, apierr.OfField(apierr.Unauthenticated, "certificate",
			"the certificate is not a valid one of this control plane's self-hosted CA: %v", err)
	}
	id, err := pki.IdentityOf(cert)
	if err != nil || id.Role != pki.RoleShard || id.Tenant == "" {
		return wire.RenewResponse{}, apierr.OfField(apierr.Unauthenticated, "certificate", "the certificate is not a self-hosted shard node's")
	}
	if pub, ok := cert.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(csr.PublicKey) {
		return wire.RenewResponse{}, apierr.OfField(apierr.Unauthenticated, "csr",
			"the certificate request is not signed by the certificate's key: renewal proves possession of the node's key (sign the request with node.key)")
	}

	err = s.View(func(r pebble.Reader) error {
		sh, ok, err := state.SelfHostedShard(r, id.Tenant, id.Shard)
		switch {
		case err != nil:
			return err
		case !ok:
			return apierr.New(apierr.Forbidden, "shard %s is not a self-hosted shard of tenant %s (revoked?): no certificate is issued for it", id.Shard, id.Tenant)
		case !slices.Contains(sh.Nodes, id.Node):
			return apierr.New(apierr.Forbidden, "node %s is not a joined node of shard %s: no certificate is issued for it", id.Node, id.Shard)
		}
		return nil
	})
	if err != nil {
		return wire.RenewResponse{}, err
	}
	certPEM, err := ca.IssueCSR([]byte(req.CSR), id, nil, s.cfg.SelfHostedCertValidity)
	if err != nil {
		return wire.RenewResponse{}, apierr.Field("csr", "%v", err)
	}
	issued, err := parseOneCert(string(certPEM))
	if err != nil {
		return wire.RenewResponse{}, err
	}
	s.cfg.Logger.Info("control: renewed a self-hosted node's certificate", "identity", id.String(), "not_after", issued.NotAfter)
	return wire.RenewResponse{Certificate: string(certPEM), CA: string(ca.CertPEM()), NotAfter: issued.NotAfter}, nil
}

// parseOneCert reads a PEM text holding exactly one certificate.
func parseOneCert(s string) (*x509.Certificate, error) {
	block, rest := pem.Decode([]byte(s))
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errNoPEMCert
	}
	if more, _ := pem.Decode(rest); more != nil {
		return nil, errMorePEM
	}
	return x509.ParseCertificate(block.Bytes)
}

var (
	errNoPEMCert = errors.New("not a PEM certificate")
	errMorePEM   = errors.New("more than one PEM block: send the node's certificate alone")
)

package service

import (
	"context"
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
	id, _, err := ca.VerifyRenewal([]byte(req.Certificate), []byte(req.CSR), s.cfg.Clock.Now())
	if err != nil {
		return wire.RenewResponse{}, renewalRefused(err)
	}
	if id.Role != pki.RoleShard || id.Tenant == "" {
		return wire.RenewResponse{}, apierr.OfField(apierr.Unauthenticated, "certificate", "the certificate is not a self-hosted shard node's")
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
	issued, err := pki.ParseOneCert(certPEM)
	if err != nil {
		return wire.RenewResponse{}, err
	}
	s.cfg.Logger.Info("control: renewed a self-hosted node's certificate", "identity", id.String(), "not_after", issued.NotAfter)
	return wire.RenewResponse{Certificate: string(certPEM), CA: string(ca.CertPEM()), NotAfter: issued.NotAfter}, nil
}

// renewalRefused is the API's answer to a refused renewal: a request
// that cannot be read is a 400 naming its field; a certificate or a
// request that proves nothing, a 401.
func renewalRefused(err error) error {
	var re *pki.RenewalError
	if !errors.As(err, &re) {
		return err
	}
	switch re.Problem {
	case pki.RenewalMalformed, pki.RenewalOtherIdentity:
		return apierr.Field(re.Field, "%v", re.Err)
	case pki.RenewalExpired:
		return apierr.OfField(apierr.Unauthenticated, "certificate",
			"the certificate expired at %s and cannot be renewed: the node must join again with a new token", re.NotAfter.UTC().Format(time.RFC3339))
	case pki.RenewalUntrusted:
		return apierr.OfField(apierr.Unauthenticated, "certificate",
			"the certificate is not a valid one of this control plane's self-hosted CA: %v", re.Err)
	case pki.RenewalNoIdentity:
		return apierr.OfField(apierr.Unauthenticated, "certificate", "the certificate is not a self-hosted shard node's")
	}
	return apierr.OfField(apierr.Unauthenticated, "csr",
		"the certificate request is not signed by the certificate's key: renewal proves possession of the node's key (sign the request with node.key)")
}

package pki

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func problem(t *testing.T, err error) (string, RenewalProblem) {
	t.Helper()
	var re *RenewalError
	require.True(t, errors.As(err, &re), "%v", err)
	return re.Field, re.Problem
}

// Every check of a renewal's inputs, in one call.
func TestVerifyRenewal(t *testing.T) {
	t.Parallel()
	ca, err := NewCA("self-hosted")
	require.NoError(t, err)
	id := Identity{Role: RoleShard, Shard: "sh_1", Node: "n1", Tenant: "t_01hzzzzzzzzzzzzzzzzzzzzzza"}
	csr, key, err := NewCSR(id, nil)
	require.NoError(t, err)
	cert, err := ca.IssueCSR(csr, id, nil, time.Hour)
	require.NoError(t, err)
	now := time.Now()

	got, leaf, err := ca.VerifyRenewal(cert, csr, now)
	require.NoError(t, err)
	require.Equal(t, id, got)
	require.Equal(t, id.String(), leaf.Subject.CommonName)

	field, p := problem(t, func() error { _, _, err := ca.VerifyRenewal([]byte("x"), csr, now); return err }())
	require.Equal(t, "certificate", field)
	require.Equal(t, RenewalMalformed, p)
	field, p = problem(t, func() error { _, _, err := ca.VerifyRenewal(cert, []byte("x"), now); return err }())
	require.Equal(t, "csr", field)
	require.Equal(t, RenewalMalformed, p)

	var re *RenewalError
	_, _, err = ca.VerifyRenewal(cert, csr, now.Add(2*time.Hour))
	require.ErrorAs(t, err, &re)
	require.Equal(t, RenewalExpired, re.Problem, "no grace after expiry")
	require.False(t, re.NotAfter.IsZero())

	other, err := NewCA("other")
	require.NoError(t, err)
	_, _, err = other.VerifyRenewal(cert, csr, now)
	_, p = problem(t, err)
	require.Equal(t, RenewalUntrusted, p, "another CA's certificate")

	stranger, _, err := NewCSR(id, nil) // a request with another key
	require.NoError(t, err)
	_, _, err = ca.VerifyRenewal(cert, stranger, now)
	field, p = problem(t, err)
	require.Equal(t, "csr", field)
	require.Equal(t, RenewalNotPossessed, p, "a certificate is public: the key proves the sender")

	// The node's own key, asking for another node's identity.
	otherID := Identity{Role: RoleShard, Shard: "sh_1", Node: "n2", Tenant: "t_01hzzzzzzzzzzzzzzzzzzzzzza"}
	signer, err := ParseKey(key)
	require.NoError(t, err)
	_, _, err = ca.VerifyRenewal(cert, csrFor(t, signer, otherID.URI()), now)
	field, p = problem(t, err)
	require.Equal(t, "csr", field)
	require.Equal(t, RenewalOtherIdentity, p)
}

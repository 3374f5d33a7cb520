package client

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultWebhookTolerance is how far a request's webhook-timestamp may be
// from the verifier's clock, either way, unless a tolerance is given.
const DefaultWebhookTolerance = 5 * time.Minute

// maxWebhookSignatures bounds the signatures one request may make a
// verifier try (a rotation sends two; a few more are tolerated).
const maxWebhookSignatures = 8

// ErrWebhookUnverified is wrapped by every error of VerifyWebhook and
// WebhookVerifier.Verify: the request must not be trusted.
var ErrWebhookUnverified = errors.New("client: webhook not verified")

// WebhookVerifier checks Jobbie's signed requests (push deliveries and
// webhooks) per Standard Webhooks v1: the webhook-id, webhook-timestamp
// and webhook-signature headers, with the signed content
// "{id}.{timestamp}.{body}". It is written apart from the server's
// signing code, from the specification.
type WebhookVerifier struct {
	// Tolerance is how far webhook-timestamp may be from now, either way;
	// zero means DefaultWebhookTolerance.
	Tolerance time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	secrets [][]byte            // "whsec_" keys: v1 HMAC-SHA256
	public  []ed25519.PublicKey // "whpk_" keys: v1a Ed25519
}

// NewWebhookVerifier trusts keys: Ed25519 public keys as published
// ("whpk_<base64>"), and shared secrets ("whsec_<base64>") where the
// namespace chose one. During a key rotation, trust both keys.
func NewWebhookVerifier(keys ...string) (*WebhookVerifier, error) {
	if len(keys) == 0 {
		return nil, errors.New("client: webhook verifier: no keys")
	}
	v := &WebhookVerifier{}
	for i, k := range keys {
		switch {
		case strings.HasPrefix(k, "whpk_"):
			b, err := base64.StdEncoding.DecodeString(k[len("whpk_"):])
			if err != nil || len(b) != ed25519.PublicKeySize {
				return nil, fmt.Errorf("client: webhook verifier: key %d is not a base64 Ed25519 public key", i)
			}
			v.public = append(v.public, ed25519.PublicKey(b))
		case strings.HasPrefix(k, "whsec_"):
			b, err := base64.StdEncoding.DecodeString(k[len("whsec_"):])
			if err != nil || len(b) < 24 {
				return nil, fmt.Errorf("client: webhook verifier: key %d is not a base64 secret of at least 24 bytes", i)
			}
			v.secrets = append(v.secrets, b)
		default:
			return nil, fmt.Errorf("client: webhook verifier: key %d starts with neither whpk_ nor whsec_", i)
		}
	}
	return v, nil
}

// VerifyWebhook checks one request against keys (see
// NewWebhookVerifier); a zero tolerance means DefaultWebhookTolerance.
func VerifyWebhook(header http.Header, body []byte, keys []string, tolerance time.Duration) error {
	v, err := NewWebhookVerifier(keys...)
	if err != nil {
		return err
	}
	v.Tolerance = tolerance
	return v.Verify(header, body)
}

// Verify checks that the request's timestamp is within the tolerance and
// that one of its signatures was made by a trusted key over the exact
// body received (read the body raw; do not decode and re-encode it
// before verifying).
func (v *WebhookVerifier) Verify(header http.Header, body []byte) error {
	id, ts, sigs := header.Get("webhook-id"), header.Get("webhook-timestamp"), header.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return fmt.Errorf("%w: missing webhook-id, webhook-timestamp or webhook-signature", ErrWebhookUnverified)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: webhook-timestamp %q is not a number of seconds", ErrWebhookUnverified, ts)
	}
	now, tolerance := v.now(), v.Tolerance
	if tolerance <= 0 {
		tolerance = DefaultWebhookTolerance
	}
	if at := time.Unix(sec, 0); at.Before(now.Add(-tolerance)) || at.After(now.Add(tolerance)) {
		return fmt.Errorf("%w: webhook-timestamp %s is more than %s from now (%s)", ErrWebhookUnverified,
			at.UTC().Format(time.RFC3339), tolerance, now.UTC().Format(time.RFC3339))
	}
	content := []byte(id + "." + ts + "." + string(body))
	fields := strings.Fields(sigs)
	if len(fields) > maxWebhookSignatures {
		fields = fields[:maxWebhookSignatures]
	}
	for _, f := range fields {
		if v.matches(f, content) {
			return nil
		}
	}
	return fmt.Errorf("%w: no signature matches a trusted key", ErrWebhookUnverified)
}

// matches reports whether one "version,base64" signature verifies with a
// trusted key. Unknown versions never match.
func (v *WebhookVerifier) matches(field string, content []byte) bool {
	version, b64, ok := strings.Cut(field, ",")
	if !ok {
		return false
	}
	sig, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return false
	}
	switch version {
	case "v1a":
		for _, pub := range v.public {
			if ed25519.Verify(pub, content, sig) {
				return true
			}
		}
	case "v1":
		for _, secret := range v.secrets {
			m := hmac.New(sha256.New, secret)
			m.Write(content)
			if hmac.Equal(m.Sum(nil), sig) { // constant time
				return true
			}
		}
	}
	return false
}

func (v *WebhookVerifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

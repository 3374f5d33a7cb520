package whsign

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

// The Standard Webhooks headers.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// MaxIDBytes bounds a webhook-id.
const MaxIDBytes = 256

// KeySet is a namespace's signing keys, oldest first.
type KeySet []Key

// Sign returns the webhook-signature header for a request with this id,
// timestamp (whole seconds are signed) and body: one signature per key
// that signs at ts, space-separated. The id is the caller's (an event's
// or a job attempt's, stable across redeliveries); it may not hold '.',
// which delimits the signed content, or whitespace.
func (s KeySet) Sign(id string, ts time.Time, body []byte) (string, error) {
	if err := checkID(id); err != nil {
		return "", err
	}
	content := signedContent(id, ts, body)
	var sigs []string
	for _, k := range s {
		if k.scheme != HMAC && k.scheme != Ed25519 {
			return "", fmt.Errorf("whsign: key %q was not made by NewEd25519Key, NewHMACKey or ParseKey", k.ID)
		}
		if !k.signsAt(ts) {
			continue
		}
		sigs = append(sigs, k.sign(content))
	}
	if len(sigs) == 0 {
		return "", errors.New("whsign: no key signs at " + ts.UTC().Format(time.RFC3339))
	}
	return strings.Join(sigs, " "), nil
}

// Headers returns the three Standard Webhooks headers for a request.
func (s KeySet) Headers(id string, ts time.Time, body []byte) (http.Header, error) {
	sig, err := s.Sign(id, ts, body)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return h, nil
}

// Rotate returns the set with k added and every other key that has no
// earlier end given NotAfter now+overlap, so both sign during the
// overlap; keys whose NotAfter is past by now are dropped.
func (s KeySet) Rotate(k Key, now time.Time, overlap time.Duration) KeySet {
	end := now.Add(overlap)
	out := make(KeySet, 0, len(s)+1)
	for _, old := range s {
		if !old.NotAfter.IsZero() && !now.Before(old.NotAfter) {
			continue
		}
		if old.NotAfter.IsZero() || end.Before(old.NotAfter) {
			old.NotAfter = end
		}
		out = append(out, old)
	}
	return append(out, k)
}

// Public is the public part of every key, to publish.
func (s KeySet) Public() []PublicKey {
	out := make([]PublicKey, len(s))
	for i, k := range s {
		out[i] = k.Public()
	}
	return out
}

func checkID(id string) error {
	switch {
	case id == "":
		return errors.New("whsign: empty webhook-id")
	case len(id) > MaxIDBytes:
		return fmt.Errorf("whsign: webhook-id longer than %d bytes", MaxIDBytes)
	case strings.ContainsAny(id, ". \t\r\n"):
		return fmt.Errorf("whsign: webhook-id %q holds '.' or whitespace", id)
	}
	return nil
}

// signedContent is the spec's "{id}.{timestamp}.{body}".
func signedContent(id string, ts time.Time, body []byte) []byte {
	b := make([]byte, 0, len(id)+len(body)+24)
	b = append(b, id...)
	b = append(b, '.')
	b = strconv.AppendInt(b, ts.Unix(), 10)
	b = append(b, '.')
	return append(b, body...)
}

func (k Key) sign(content []byte) string {
	var sig []byte
	if k.scheme == HMAC {
		m := hmac.New(sha256.New, k.secret)
		m.Write(content)
		sig = m.Sum(nil)
	} else {
		sig = ed25519.Sign(k.priv, content)
	}
	return string(k.scheme) + "," + base64.StdEncoding.EncodeToString(sig)
}

package whsign

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The vectors published with the Standard Webhooks reference libraries
// (libraries/go/webhook_test.go and webhook_asymmetric_test.go).
func TestSpecVectors(t *testing.T) {
	t.Parallel()
	id, ts, body := "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`)

	k, err := ParseKey("k1", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	require.NoError(t, err)
	sig, err := KeySet{k}.Sign(id, ts, body)
	require.NoError(t, err)
	require.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", sig)

	k, err = ParseKey("k2", "whsk_VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk=")
	require.NoError(t, err)
	sig, err = KeySet{k}.Sign(id, ts, body)
	require.NoError(t, err)
	require.Equal(t, "v1a,tQ9V2XOqn7jL/DQenEFpqIugdBVtiMmER5mhSkXBNwM0mkATuDe6KYYUuxqtaiHeYGb7KaaBRdM5WqyeFiL8Ag==", sig)
}

// verifySpec is an implementation of the spec's verification written
// from its text, apart from the package: which of the trusted keys
// ("whsec_…" secrets, "whpk_…" public keys) signed the request.
func verifySpec(t *testing.T, id, ts, sigHeader string, body []byte, trusted ...string) []string {
	t.Helper()
	content := []byte(id + "." + ts + "." + string(body))
	var matched []string
	for _, entry := range strings.Split(sigHeader, " ") {
		version, b64, ok := strings.Cut(entry, ",")
		require.True(t, ok, entry)
		sig, err := base64.StdEncoding.DecodeString(b64)
		require.NoError(t, err)
		for _, key := range trusted {
			switch {
			case version == "v1" && strings.HasPrefix(key, "whsec_"):
				secret, err := base64.StdEncoding.DecodeString(key[len("whsec_"):])
				require.NoError(t, err)
				m := hmac.New(sha256.New, secret)
				m.Write(content)
				if hmac.Equal(m.Sum(nil), sig) {
					matched = append(matched, key)
				}
			case version == "v1a" && strings.HasPrefix(key, "whpk_"):
				pub, err := base64.StdEncoding.DecodeString(key[len("whpk_"):])
				require.NoError(t, err)
				if ed25519.Verify(pub, content, sig) {
					matched = append(matched, key)
				}
			}
		}
	}
	return matched
}

func TestHeadersVerifyIndependently(t *testing.T) {
	t.Parallel()
	ed, err := NewEd25519Key("ed")
	require.NoError(t, err)
	mac, err := NewHMACKey("mac")
	require.NoError(t, err)
	now := time.Now()
	body := []byte(`{"job_id":"j1","payload":{"n":1}}`)
	h, err := KeySet{ed, mac}.Headers("j1_1", now, body)
	require.NoError(t, err)
	require.Equal(t, "j1_1", h.Get("webhook-id"))
	require.Equal(t, fmt.Sprint(now.Unix()), h.Get("webhook-timestamp"))
	pub := ed.Public().Key
	require.True(t, strings.HasPrefix(pub, "whpk_"))
	require.Empty(t, mac.Public().Key, "a shared secret has no public part")
	require.Equal(t, []string{pub, mac.Secret()},
		verifySpec(t, h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature"), body, pub, mac.Secret()))
	require.Empty(t, verifySpec(t, "j1_1", h.Get("webhook-timestamp"), h.Get("webhook-signature"), []byte(`{}`), pub, mac.Secret()),
		"another body verifies with neither")

	// A key read back from its serialization signs the same.
	again, err := ParseKey("ed", ed.Secret())
	require.NoError(t, err)
	require.Equal(t, ed.Public(), again.Public())
}

func TestRotationSignsWithBothDuringTheOverlap(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_800_000_000, 0)
	oldKey, err := NewEd25519Key("old")
	require.NoError(t, err)
	newKey, err := NewEd25519Key("new")
	require.NoError(t, err)
	set := KeySet{oldKey}.Rotate(newKey, t0, time.Hour)
	require.Equal(t, t0.Add(time.Hour), set[0].NotAfter)
	require.True(t, set[1].NotAfter.IsZero())
	pubs := set.Public()
	require.Equal(t, []string{"old", "new"}, []string{pubs[0].ID, pubs[1].ID})

	body := []byte("{}")
	during, err := set.Sign("e1", t0.Add(30*time.Minute), body)
	require.NoError(t, err)
	require.Len(t, strings.Split(during, " "), 2)
	ts := fmt.Sprint(t0.Add(30 * time.Minute).Unix())
	require.Equal(t, []string{pubs[0].Key}, verifySpec(t, "e1", ts, during, body, pubs[0].Key), "a handler trusting the old key verifies")
	require.Equal(t, []string{pubs[1].Key}, verifySpec(t, "e1", ts, during, body, pubs[1].Key), "and one trusting the new key")

	after, err := set.Sign("e1", t0.Add(time.Hour), body)
	require.NoError(t, err)
	require.NotContains(t, after, " ", "after the overlap only the new key signs")
	ts = fmt.Sprint(t0.Add(time.Hour).Unix())
	require.Empty(t, verifySpec(t, "e1", ts, after, body, pubs[0].Key))

	third, err := NewHMACKey("third")
	require.NoError(t, err)
	set = set.Rotate(third, t0.Add(2*time.Hour), 10*time.Minute)
	require.Equal(t, []string{"new", "third"}, []string{set[0].ID, set[1].ID}, "the expired key is dropped")
}

func TestBadKeysAndIDs(t *testing.T) {
	t.Parallel()
	for secret, want := range map[string]string{
		"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw": "starts with whsec_ or whsk_",
		"whsec_!!!":                        "not base64",
		"whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 16)): "16 bytes, want 24 to 64",
		"whsk_" + base64.StdEncoding.EncodeToString(make([]byte, 31)):  "31 bytes, want 32",
		"whpk_" + base64.StdEncoding.EncodeToString(make([]byte, 32)):  "starts with whsec_ or whsk_",
	} {
		_, err := ParseKey("k", secret)
		require.ErrorContains(t, err, want, secret)
	}
	k, err := NewHMACKey("k")
	require.NoError(t, err)
	for id, want := range map[string]string{"": "empty", "a.b": "'.'", "a b": "whitespace", strings.Repeat("x", 300): "longer"} {
		_, err := KeySet{k}.Sign(id, time.Now(), nil)
		require.ErrorContains(t, err, want, id)
	}
	_, err = KeySet{}.Sign("id", time.Now(), nil)
	require.ErrorContains(t, err, "no key signs")
	_, err = KeySet{{ID: "zero"}}.Sign("id", time.Now(), nil)
	require.ErrorContains(t, err, `key "zero" was not made by`)
}

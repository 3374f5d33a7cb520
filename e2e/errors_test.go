package e2e

import (
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/tenancy"
)

func TestBadInputIs400NamingTheField(t *testing.T) {
	t.Parallel()
	_, ct := shared.tenant(t)
	key := ct.OwnerKey
	url := shared.gateway + "/api/v1/enqueue"
	cases := []struct {
		name, body, code, field string
	}{
		{"malformed JSON", `{"queue":`, "invalid_json", ""},
		{"unknown priority", `{"queue":"q","priority":"urgent"}`, "bad_request", "priority"},
		{"negative delay", `{"queue":"q","retry_base_delay":"-5s"}`, "bad_request", "retry_base_delay"},
		{"negative max_retries", `{"queue":"q","max_retries":-1}`, "bad_request", "max_retries"},
		{"bad queue name", `{"queue":"no spaces allowed"}`, "bad_request", "queue"},
		{"missing queue", `{"payload":1}`, "bad_request", "queue"},
		{"bad scheduled_at", `{"queue":"q","scheduled_at":"tomorrow"}`, "bad_request", "scheduled_at"},
		{"wrong type", `{"queue":"q","max_retries":"three"}`, "invalid_json", "max_retries"},
		{"unknown field", `{"queue":"q","prority":"high"}`, "bad_request", "prority"},
		{"NUL in a tag key", `{"queue":"q","tags":{"a\u0000b":"c"}}`, "bad_request", "tags"},
		{"NUL in a tag value", `{"queue":"q","tags":{"a":"b\u0000c"}}`, "bad_request", "tags"},
	}
	for _, tc := range cases {
		r := call(t, "POST", url, key, tc.body)
		require.Equal(t, 400, r.Status, "%s: %s", tc.name, r.Raw)
		require.Equal(t, tc.code, r.code(), tc.name)
		require.Equal(t, tc.field, r.field(), tc.name)
		require.NotEmpty(t, r.Body["error"].(map[string]any)["request_id"], tc.name)
	}
	r := call(t, "POST", shared.gateway+"/api/v1/namespaces", key, map[string]string{"name": "Bad_Name"})
	require.Equal(t, 400, r.Status, string(r.Raw))
	require.Equal(t, "name", r.field())
	r = call(t, "POST", shared.gateway+"/api/v1/fetch", key, map[string]any{"queues": []string{"q"}, "lease_duration": 0.5})
	require.Equal(t, 400, r.Status)
	require.Equal(t, "lease_duration", r.field())
	// Nothing was enqueued by any of it.
	r = call(t, "POST", shared.gateway+"/api/v1/fetch", key, map[string]any{"queues": []string{"q"}, "timeout": 0})
	require.Equal(t, 204, r.Status)
}

func TestUnauthenticatedIs401(t *testing.T) {
	t.Parallel()
	url := shared.gateway + "/api/v1/enqueue"
	body := `{"queue":"q"}`
	r := call(t, "POST", url, "", body)
	require.Equal(t, 401, r.Status)
	require.Equal(t, "unauthenticated", r.code())
	r = call(t, "POST", url, "not-a-jwt", body)
	require.Equal(t, 401, r.Status)

	// A well-formed key signed by someone else.
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	claims := tenancy.KeyClaims{TenantID: "t_01hx0000000000000000000000", Role: tenancy.RoleOwner, Namespaces: []string{"*"}, DefaultNamespace: "default",
		RegisteredClaims: jwt.RegisteredClaims{Issuer: tenancy.Issuer, Subject: "key_01hx0000000000000000000000", ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour))}}
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tok.Header["kid"] = "forged"
	forged, err := tok.SignedString(priv)
	require.NoError(t, err)
	r = call(t, "POST", url, forged, body)
	require.Equal(t, 401, r.Status)

	// A real key with its signature tampered with.
	_, ct := shared.tenant(t)
	parts := strings.Split(ct.OwnerKey, ".")
	parts[1] = parts[1][:len(parts[1])-2] + "AA"
	r = call(t, "POST", url, strings.Join(parts, "."), body)
	require.Equal(t, 401, r.Status)
}

func TestForbiddenNotFoundTooLarge(t *testing.T) {
	t.Parallel()
	owner, ct := shared.tenant(t)
	prod, err := owner.CreateKey(ctx(t), clientKey("p", tenancy.RoleProducer))
	require.NoError(t, err)
	r := call(t, "POST", shared.gateway+"/api/v1/fetch", prod.Token, map[string]any{"queues": []string{"q"}, "timeout": 0})
	require.Equal(t, 403, r.Status)
	require.Equal(t, "forbidden", r.code())

	r = call(t, "GET", shared.gateway+"/api/v1/jobs/job_01HX0000000000000000000000", ct.OwnerKey, nil)
	require.Equal(t, 404, r.Status)
	require.Equal(t, "not_found", r.code())

	big := `{"queue":"q","payload":"` + strings.Repeat("x", 1<<20+10) + `"}`
	r = call(t, "POST", shared.gateway+"/api/v1/enqueue", ct.OwnerKey, big)
	require.Equal(t, 413, r.Status)
	require.Equal(t, "payload_too_large", r.code())
}

package admission

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jonboulle/clockwork"

	"github.com/jobbie/jobbie/gateway/internal/controlfake"
	"github.com/jobbie/jobbie/tenancy"
)

// FuzzSessionToken: whatever a browser sends as its console session
// cookie, verifying it never panics, and nothing but a token this
// gateway issued is a session (a forgery needs the gateway's secret).
func FuzzSessionToken(f *testing.F) {
	g, err := New(f.Context(), Config{Control: controlfake.New(controlfake.NewSigner("sig-1")), Clock: clockwork.NewRealClock(),
		Logger: slog.New(slog.DiscardHandler), TokenCacheSize: 16, DecisionCacheSize: 16})
	if err != nil {
		f.Fatal(err)
	}
	ss := g.sessions
	claims := &tenancy.KeyClaims{TenantID: "t_01hx0000000000000000000000", Role: tenancy.RoleOwner, Namespaces: []string{"*"},
		RegisteredClaims: jwt.RegisteredClaims{Subject: "key_01hx0000000000000000000000"}}
	issued, _, err := ss.Issue(VerifiedKey{Claims: claims, kid: "sig-1"}, time.Now())
	if err != nil {
		f.Fatal(err)
	}
	mine, err := ss.Verify(issued)
	if err != nil {
		f.Fatal(err)
	}
	parts := strings.Split(issued, ".")
	f.Add(issued)
	f.Add(parts[0] + "." + parts[1] + ".")                         // no signature
	f.Add("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + ".") // alg none
	f.Add(parts[0] + "." + parts[1] + "x." + parts[2])             // changed claims
	f.Add(strings.Repeat("a", 4096))
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		// An encoding of the issued token's own bytes may verify (base64's
		// spare bits); any other session may not.
		s, err := ss.Verify(token)
		if err == nil && (s.id != mine.id || s.Key.Claims.Subject != claims.Subject || s.Key.Claims.TenantID != claims.TenantID) {
			t.Fatalf("a token the gateway did not issue is a session: %q → %+v", token, s)
		}
	})
}

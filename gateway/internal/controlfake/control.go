package controlfake

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/jobbie/jobbie/gateway/controlapi"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Control is the fake control plane. Lock it to read or change its
// exported state while the gateway runs.
type Control struct {
	sync.Mutex
	signer Signer

	// Counters of calls, readable without the lock.
	JWKSCalls, PlacementCalls, RoleFetches, PlanFetches atomic.Int64

	gone         bool   // every call fails: control is unreachable
	newShardAddr string // shard s1's address, to place created namespaces there; none when empty
	jwks         []tenancy.JWK
	jwksDown     bool
	revsDown     bool
	revoked      []string
	rotated      map[string]wire.KeySecrets // key id → its secrets, once rotated
	retiring     []wire.RetiringSigningKey
	uses         []wire.KeyUse // reported by gateways
	version      uint64
	namespaces   map[string]map[string]Placement // tenant → namespace → where
	keys         map[string][]wire.Key           // tenant → keys
	lastKeyReq   wire.CreateKeyRequest
	lastPatch    wire.UpdateNamespaceRequest
	roles        map[string]map[string]wire.Role // tenant → custom roles by name
	rolesVersion map[string]uint64
	audit        map[string][]wire.AuditRecord // tenant → its audit records at control
	sso          map[string]wire.SSORequest    // tenant → its OIDC sign-in, secret included
	ssoAt        map[string]time.Time          // tenant → when it last changed
	tenantNames  map[string]string             // tenant → its name (NameTenant)
	nextID       int

	// KeysRefused, by tenant, refuses its key creations as control would
	// (a plan's max_keys, say).
	KeysRefused map[string]*apierr.Error

	Backups Backups
	Shards  Shards
	Billing Billing

	idemMu sync.Mutex
	idem   map[string]any // "tenant kind key" → the first result of a create under an Idempotency-Key
}

// New is a fake control that signs keys with s and publishes its key.
func New(s Signer) *Control {
	return &Control{
		signer:       s,
		jwks:         []tenancy.JWK{s.JWK()},
		rotated:      map[string]wire.KeySecrets{},
		namespaces:   map[string]map[string]Placement{},
		keys:         map[string][]wire.Key{},
		roles:        map[string]map[string]wire.Role{},
		rolesVersion: map[string]uint64{},
		KeysRefused:  map[string]*apierr.Error{},
		Billing:      newBilling(),
		idem:         map[string]any{},
	}
}

// keyed is create under ctx's Idempotency-Key, if any, as control keeps
// them per tenant (bodies aside): a key's repeat gets the first result,
// marked replayed, and creates nothing; a refusal keeps no record.
func keyed[T any](fc *Control, ctx context.Context, tid, kind string, create func() (T, error)) (T, error) {
	idem := controlapi.IdempotencyOf(ctx)
	if idem == nil {
		return create()
	}
	k := tid + " " + kind + " " + idem.Key
	fc.idemMu.Lock()
	defer fc.idemMu.Unlock()
	if v, ok := fc.idem[k]; ok {
		idem.Replayed = true
		return v.(T), nil
	}
	v, err := create()
	if err == nil {
		fc.idem[k] = v
	}
	return v, err
}

var _ controlapi.Control = (*Control)(nil)

// errGone is every answer of a control that cannot be reached.
var errGone = errors.New("controlfake: control is unreachable")

// SetGone makes control unreachable (or reachable again).
func (fc *Control) SetGone(gone bool) {
	fc.Lock()
	defer fc.Unlock()
	fc.gone = gone
}

// enter takes the lock for a call; the caller unlocks. It fails the call
// while control is gone.
func (fc *Control) enter() error {
	fc.Lock()
	if fc.gone {
		return errGone
	}
	return nil
}

// refuse is control's answer e.
func refuse(e *apierr.Error) error { return controlapi.Refusal(e) }

// unavailable is control's 503 with Retry-After.
func unavailable(code apierr.Code, msg, retryAfter string) error {
	e := controlapi.Refusal(apierr.New(code, "%s", msg))
	e.RetryAfter = retryAfter
	return e
}

// clone is v as the gateway would decode it from control's JSON.
func clone[T any](v T) T {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(err)
	}
	return out
}

// Jan is a day of January 2026, the fake's creation times.
func Jan(day int) time.Time { return time.Date(2026, 1, day, 0, 0, 0, 0, time.UTC) }

// Signer signs API keys the way control does.
type Signer struct {
	Kid  string
	Priv ed25519.PrivateKey
}

// NewSigner makes a signing key named kid.
func NewSigner(kid string) Signer {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return Signer{Kid: kid, Priv: priv}
}

// Sign signs c as an API key.
func (s Signer) Sign(c tenancy.KeyClaims) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, c)
	tok.Header["kid"] = s.Kid
	out, err := tok.SignedString(s.Priv)
	if err != nil {
		panic(err)
	}
	return out
}

// JWK is the signing key's public half as control publishes it.
func (s Signer) JWK() tenancy.JWK {
	pub := s.Priv.Public().(ed25519.PublicKey)
	return tenancy.JWK{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(pub), Kid: s.Kid, Alg: "EdDSA", Use: "sig"}
}

// Claims builds key claims; the first namespace is the default ("*"
// defaults to "default").
func Claims(tid, keyID string, role tenancy.Role, nss ...string) tenancy.KeyClaims {
	dns := nss[0]
	if dns == tenancy.AllNamespaces {
		dns = tenancy.DefaultNamespace
	}
	return tenancy.KeyClaims{
		TenantID: tid, Role: role, Namespaces: nss, DefaultNamespace: dns,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: tenancy.Issuer, Subject: keyID, IssuedAt: jwt.NewNumericDate(time.Now()),
		},
	}
}

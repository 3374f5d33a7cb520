package gateway

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// signer signs API keys the way control does.
type signer struct {
	kid  string
	priv ed25519.PrivateKey
}

func newSigner(t testing.TB, kid string) signer {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	return signer{kid: kid, priv: priv}
}

func (s signer) sign(t testing.TB, c tenancy.KeyClaims) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, c)
	tok.Header["kid"] = s.kid
	out, err := tok.SignedString(s.priv)
	require.NoError(t, err)
	return out
}

func (s signer) jwk() tenancy.JWK {
	pub := s.priv.Public().(ed25519.PublicKey)
	return tenancy.JWK{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(pub), Kid: s.kid, Alg: "EdDSA", Use: "sig"}
}

// serveTLS starts srv over mutual TLS with the certificate of id,
// admitting only gateways, and closes it when the test ends. (StartTLS
// would put httptest's own certificate first.)
func serveTLS(t testing.TB, srv *httptest.Server, ca *pkitest.CA, id pki.Identity) {
	t.Helper()
	srv.Listener = tls.NewListener(srv.Listener, ca.Creds(t, id).Server(pki.Roles(pki.RoleGateway)))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are some tests' point
	srv.Start()
	srv.URL = "https://" + srv.Listener.Addr().String()
	t.Cleanup(srv.Close)
}

// fakeControl serves the slice of control's API the gateway uses, from
// memory, so gateway tests need no real control plane.
type fakeControl struct {
	t      testing.TB
	srv    *httptest.Server
	signer signer

	mu           sync.Mutex
	newShardAddr string // shard s1's address, to place created namespaces there; none when empty
	jwks         []tenancy.JWK
	jwksDown     bool
	revsDown     bool
	revoked      []string
	rotated      map[string]wire.KeySecrets // key id → its secrets, once rotated
	retiring     []wire.RetiringSigningKey
	uses         []wire.KeyUse // reported by gateways
	version      uint64
	namespaces   map[string]map[string]fakePlacement // tenant → namespace → where
	keys         map[string][]wire.Key               // tenant → keys
	lastKeyReq   wire.CreateKeyRequest
	lastPatch    wire.UpdateNamespaceRequest
	placementsN  atomic.Int64                    // placement lookups served
	roles        map[string]map[string]wire.Role // tenant → custom roles by name
	rolesVersion map[string]uint64
	roleFetches  atomic.Int64 // role lists served
	jwksN        atomic.Int64
	nextID       int
	backups      fakeBackups
	shards       fakeShards
}

// newFakeControl serves as a control node, over mutual TLS, to gateways.
func newFakeControl(t testing.TB, ca *pkitest.CA, s signer) *fakeControl {
	return newFakeControlAs(t, ca, s, pkitest.Control)
}

// newFakeControlAs serves control's API with the certificate of id.
func newFakeControlAs(t testing.TB, ca *pkitest.CA, s signer, id pki.Identity) *fakeControl {
	fc := &fakeControl{
		t: t, signer: s,
		jwks:       []tenancy.JWK{s.jwk()},
		namespaces: map[string]map[string]fakePlacement{},
		keys:       map[string][]wire.Key{},
		roles:      map[string]map[string]wire.Role{},

		rolesVersion: map[string]uint64{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /control/v1/jwks", gatewayOnly(fc.serveJWKS))
	mux.HandleFunc("GET /internal/v1/revocations", fc.internal(fc.serveRevocations))
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/namespaces", fc.internal(fc.listNamespaces))
	mux.HandleFunc("POST /internal/v1/tenants/{tid}/namespaces", fc.internal(fc.createNamespace))
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/namespaces/{ns}", fc.internal(fc.getNamespace))
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/keys", fc.internal(fc.listKeys))
	mux.HandleFunc("POST /internal/v1/tenants/{tid}/keys", fc.internal(fc.createKey))
	mux.HandleFunc("DELETE /internal/v1/tenants/{tid}/keys/{id}", fc.internal(fc.deleteKey))
	fc.adminRoutes(mux)
	fc.roleRoutes(mux)
	fc.backupRoutes(mux)
	fc.shardRoutes(mux)
	fc.srv = httptest.NewUnstartedServer(mux)
	serveTLS(t, fc.srv, ca, id)
	return fc
}

// gatewayOnly admits a caller that showed a gateway's certificate and
// sent no other credentials.
func gatewayOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if id, ok := pki.PeerIdentity(r.TLS); !ok || id.Role != pki.RoleGateway || r.Header.Get("Authorization") != "" {
			writeErr(w, apierr.New(apierr.Forbidden, "a gateway's certificate and no other credentials"))
			return
		}
		h(w, r)
	}
}

// internal admits the gateway to a handler of control's state.
func (fc *fakeControl) internal(h http.HandlerFunc) http.HandlerFunc {
	return gatewayOnly(func(w http.ResponseWriter, r *http.Request) {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		h(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, e *apierr.Error) {
	writeJSON(w, apierr.Status(e.Code), wire.ErrorBody{Error: e.Wire()})
}

func (fc *fakeControl) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	fc.jwksN.Add(1)
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.jwksDown {
		writeErr(w, apierr.New(apierr.Unavailable, "down"))
		return
	}
	writeJSON(w, http.StatusOK, tenancy.JWKS{Keys: fc.jwks})
}

func (fc *fakeControl) serveRevocations(w http.ResponseWriter, _ *http.Request) {
	if fc.revsDown {
		writeErr(w, apierr.New(apierr.Unavailable, "down"))
		return
	}
	rev := wire.Revocations{Version: fc.version, Revoked: fc.revoked, SigningKeys: fc.retiring, Roles: fc.rolesVersionsLocked()}
	for _, ks := range fc.rotated {
		rev.Rotated = append(rev.Rotated, ks)
	}
	writeJSON(w, http.StatusOK, rev)
}

func (fc *fakeControl) listNamespaces(w http.ResponseWriter, r *http.Request) {
	// With the placement of each, so tests see the gateway keep it from
	// tenants.
	out := []wire.NamespacePlacement{}
	for name, pl := range fc.namespaces[r.PathValue("tid")] {
		out = append(out, wire.NamespacePlacement{Namespace: pl.view(name), ShardID: pl.shardID, ShardAddr: pl.addr})
	}
	slices.SortFunc(out, func(a, b wire.NamespacePlacement) int { return compare(a.Name, b.Name) })
	writeJSON(w, http.StatusOK, map[string]any{"namespaces": out})
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (fc *fakeControl) createNamespace(w http.ResponseWriter, r *http.Request) {
	var in struct {
		wire.CreateNamespaceRequest
		Shard string `json:"shard"`
	}
	_ = json.NewDecoder(r.Body).Decode(&in)
	fc.shards.lastPlacedOn = in.Shard
	tid := r.PathValue("tid")
	if _, ok := fc.namespaces[tid][in.Name]; ok {
		writeErr(w, apierr.New(apierr.Conflict, "namespace %q exists", in.Name))
		return
	}
	settings := wire.Namespace{Name: in.Name, Description: in.Description, DeletionProtection: in.DeletionProtection, CreatedAt: jan(2)}
	_ = json.Unmarshal(in.Retention, &settings.Retention)
	id, addr := "s-new", "127.0.0.1:1"
	if fc.newShardAddr != "" {
		id, addr = "s1", fc.newShardAddr
	}
	fc.placeLocked(tid, in.Name, fakePlacement{shardID: id, addr: addr, settings: settings})
	writeJSON(w, http.StatusCreated, wire.NamespacePlacement{Namespace: settings, ShardID: "s1"})
}

func (fc *fakeControl) getNamespace(w http.ResponseWriter, r *http.Request) {
	fc.placementsN.Add(1)
	pl, ok := fc.namespaces[r.PathValue("tid")][r.PathValue("ns")]
	if !ok {
		writeErr(w, apierr.New(apierr.NotFound, "namespace not found"))
		return
	}
	writeJSON(w, http.StatusOK, wire.NamespacePlacement{Namespace: pl.view(r.PathValue("ns")),
		ShardID: pl.shardID, ShardAddr: pl.addr, ShardMembers: pl.members, Moving: pl.moving,
		Unjoined: pl.unjoined})
}

func (fc *fakeControl) listKeys(w http.ResponseWriter, r *http.Request) {
	keys := fc.keys[r.PathValue("tid")]
	if keys == nil {
		keys = []wire.Key{}
	}
	writeJSON(w, http.StatusOK, wire.KeyList{Keys: keys})
}

func (fc *fakeControl) createKey(w http.ResponseWriter, r *http.Request) {
	var in wire.CreateKeyRequest
	_ = json.NewDecoder(r.Body).Decode(&in)
	fc.lastKeyReq = in
	tid := r.PathValue("tid")
	fc.nextID++
	m := wire.Key{ID: fmt.Sprintf("key_%d", fc.nextID), Name: in.Name, Role: in.Role, Namespaces: in.Namespaces, CreatedAt: jan(3)}
	claims := claimsFor(tid, m.ID, tenancy.Role(m.Role), m.Namespaces...)
	if in.ExpiresAt != nil {
		var exp time.Time
		if err := json.Unmarshal(in.ExpiresAt, &exp); err != nil {
			writeErr(w, apierr.Field("expires_at", "expires_at must be an RFC 3339 time"))
			return
		}
		exp = exp.UTC()
		m.ExpiresAt = &exp
		claims.ExpiresAt = jwt.NewNumericDate(exp)
	}
	fc.keys[tid] = append(fc.keys[tid], m)
	writeJSON(w, http.StatusCreated, wire.CreatedKey{Key: m, Token: fc.signer.sign(fc.t, claims)})
}

func (fc *fakeControl) deleteKey(w http.ResponseWriter, r *http.Request) {
	tid, id := r.PathValue("tid"), r.PathValue("id")
	i := slices.IndexFunc(fc.keys[tid], func(k wire.Key) bool { return k.ID == id })
	if i < 0 {
		writeErr(w, apierr.New(apierr.NotFound, "key not found"))
		return
	}
	fc.keys[tid] = slices.Delete(fc.keys[tid], i, i+1)
	fc.revokeLocked(id)
	w.WriteHeader(http.StatusNoContent)
}

// jan is a day of January 2026, the fake's creation times.
func jan(day int) time.Time { return time.Date(2026, 1, day, 0, 0, 0, 0, time.UTC) }

// fakePlacement is where the fake control says a namespace lives, and
// its settings.
type fakePlacement struct {
	shardID, addr string
	members       []string
	settings      wire.Namespace
	moving        bool // a live move of it runs
	unjoined      bool // on a self-hosted shard no node joined
}

// addNamespace places a namespace on shard id, known by one address.
func (fc *fakeControl) addNamespace(tid, ns, id, shardAddr string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.addNamespaceLocked(tid, ns, id, shardAddr)
}

func (fc *fakeControl) addNamespaceLocked(tid, ns, id, shardAddr string) {
	fc.placeLocked(tid, ns, fakePlacement{shardID: id, addr: shardAddr})
}

// place puts a namespace on shard cluster id with these members (control
// gives the first as shard_addr).
func (fc *fakeControl) place(tid, ns, id string, members ...string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.placeLocked(tid, ns, fakePlacement{shardID: id, addr: members[0], members: members})
}

func (fc *fakeControl) placeLocked(tid, ns string, pl fakePlacement) {
	if fc.namespaces[tid] == nil {
		fc.namespaces[tid] = map[string]fakePlacement{}
	}
	fc.namespaces[tid][ns] = pl
}

func (fc *fakeControl) addKey(tid string, m wire.Key) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.keys[tid] = append(fc.keys[tid], m)
}

func (fc *fakeControl) revoke(keyID string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.revokeLocked(keyID)
}

func (fc *fakeControl) revokeLocked(keyID string) {
	fc.revoked = append(fc.revoked, keyID)
	fc.version++
}

// setRevocationsDown makes the revocation list fail (or serve again).
func (fc *fakeControl) setRevocationsDown(down bool) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.revsDown = down
}

func (fc *fakeControl) setJWKS(keys []tenancy.JWK, down bool) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.jwks, fc.jwksDown = keys, down
}

// shardRequest is what the fake shard saw of one request.
type shardRequest struct {
	Method, URI, Body string
	Header            http.Header
	Peer              pki.Identity // from the caller's certificate; zero on a Unix socket
}

// fakeShard records requests and answers them with its handler.
type fakeShard struct {
	id      pki.Identity // its certificate's; zero on a Unix socket
	srv     *httptest.Server
	mu      sync.Mutex
	seen    []shardRequest
	handler http.HandlerFunc
}

// newFakeShard serves as node of shard over mutual TLS, to gateways.
func newFakeShard(t testing.TB, ca *pkitest.CA, shard, node string) *fakeShard {
	fs := &fakeShard{id: pkitest.Shard(shard, node), handler: created}
	fs.srv = httptest.NewUnstartedServer(fs)
	serveTLS(t, fs.srv, ca, fs.id)
	return fs
}

// newUnixFakeShard serves on a Unix socket, without TLS, as a shard does
// for a gateway on its host.
func newUnixFakeShard(t testing.TB) (*fakeShard, string) {
	dir, err := os.MkdirTemp("", "gw") // short: socket paths are limited
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, "shard.sock")
	ln, err := net.Listen("unix", path)
	require.NoError(t, err)
	fs := &fakeShard{handler: created}
	fs.srv = httptest.NewUnstartedServer(fs)
	require.NoError(t, fs.srv.Listener.Close())
	fs.srv.Listener = ln
	fs.srv.Start()
	t.Cleanup(fs.srv.Close)
	return fs, "unix:" + path
}

// ServeHTTP records a request and answers it with the handler. Over TLS
// only the gateway's certificate gets this far; the check is the shard's.
func (fs *fakeShard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	peer, ok := pki.PeerIdentity(r.TLS)
	if fs.id.Role != "" && (!ok || peer.Role != pki.RoleGateway) {
		writeErr(w, apierr.New(apierr.Forbidden, "only a gateway's certificate is admitted"))
		return
	}
	b, _ := io.ReadAll(r.Body)
	fs.mu.Lock()
	fs.seen = append(fs.seen, shardRequest{Method: r.Method, URI: r.RequestURI, Body: string(b), Header: r.Header.Clone(), Peer: peer})
	h := fs.handler
	fs.mu.Unlock()
	h(w, r)
}

func (fs *fakeShard) addr() string { return fs.srv.Listener.Addr().String() }

func (fs *fakeShard) setHandler(h http.HandlerFunc) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.handler = h
}

func (fs *fakeShard) last(t testing.TB) shardRequest {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	require.NotEmpty(t, fs.seen, "the shard saw no request")
	return fs.seen[len(fs.seen)-1]
}

func (fs *fakeShard) count() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return len(fs.seen)
}

// claimsFor builds key claims; the first namespace is the default ("*"
// defaults to "default").
func claimsFor(tid, keyID string, role tenancy.Role, nss ...string) tenancy.KeyClaims {
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

func (fc *fakeControl) tenantKeys(tid string) []wire.Key {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return slices.Clone(fc.keys[tid])
}

func (fc *fakeControl) lastKeyRequest() wire.CreateKeyRequest {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.lastKeyReq
}

func (fc *fakeControl) isRevoked(keyID string) bool {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return slices.Contains(fc.revoked, keyID)
}

package embedded

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/jobbie/jobbie/gateway"
	"github.com/jobbie/jobbie/internal/atomicfile"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Options.Listen serves the node's API to other processes through the
// gateway a self-hosted node runs as its local API (gateway.LocalTrust):
// the same admission (keys verified, RBAC), limits and proxy as the
// hosted service, judging keys by a trust bundle the node makes itself
// instead of one pushed from control. The node signs its keys with an
// Ed25519 key of its own (<dir>/api/signing.seed) and mints an owner key
// once (<dir>/owner.key, Embedded.OwnerKey), both readable by the owner
// only. The local API serves no tenant administration (it is control's),
// so neither does Listen; Options.Console mounts the console there too
// (LocalTrust.Console), its sessions signed in with the node's keys.

const (
	signingKeyID = "sk_embedded"
	ownerKeyID   = "key_embedded_owner"
)

// api is the served API: its gateway and the owner key.
type api struct {
	gw       *gateway.Server
	ownerKey string
}

// serve starts the gateway on o.Listen in front of the node's socket.
func serve(ctx context.Context, o Options, sock string, log *slog.Logger) (*api, error) {
	seed, err := readOrCreate(filepath.Join(o.Dir, "api", "signing.seed"), func() (string, error) {
		s := make([]byte, ed25519.SeedSize)
		_, err := rand.Read(s)
		return hex.EncodeToString(s), err
	})
	if err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(seed)
	if err != nil || len(raw) != ed25519.SeedSize {
		return nil, fmt.Errorf("%s holds no Ed25519 seed", filepath.Join(o.Dir, "api", "signing.seed"))
	}
	priv := ed25519.NewKeyFromSeed(raw)
	owner, err := readOrCreate(filepath.Join(o.Dir, "owner.key"), func() (string, error) { return ownerToken(priv, o.Namespace) })
	if err != nil {
		return nil, err
	}
	bundle, err := trustBundle(priv.Public().(ed25519.PublicKey), append([]string{o.Namespace}, o.Namespaces...))
	if err != nil {
		return nil, err
	}
	gw, err := gateway.New(gateway.Config{Addr: o.Listen, Logger: log.With("embedded_api", o.Listen),
		Local: &gateway.LocalTrust{TenantID: tenantID, ShardID: shardID, ShardAddr: "unix:" + sock, Console: o.Console,
			// The node's own bundle is current whenever it is asked.
			Bundle: func() (wire.TrustBundle, time.Time, bool) { return bundle, time.Now(), true }}})
	if err != nil {
		return nil, err
	}
	// Open's ctx bounds the start, not the serving (a gateway stops when
	// the context of its Start ends): Close stops it.
	if err := gw.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, fmt.Errorf("Options.Listen %s: %w", o.Listen, err)
	}
	select {
	case <-gw.Ready():
	case <-ctx.Done():
		_ = gw.Stop()
		return nil, ctx.Err()
	}
	return &api{gw: gw, ownerKey: owner}, nil
}

// ownerToken is an owner key of every namespace, signed by priv.
func ownerToken(priv ed25519.PrivateKey, namespace string) (string, error) {
	claims := tenancy.KeyClaims{TenantID: tenantID, Role: tenancy.RoleOwner, Namespaces: []string{tenancy.AllNamespaces},
		DefaultNamespace: namespace,
		RegisteredClaims: jwt.RegisteredClaims{Issuer: tenancy.Issuer, Subject: ownerKeyID, IssuedAt: jwt.NewNumericDate(time.Now())}}
	t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, &claims)
	t.Header["kid"] = signingKeyID
	return t.SignedString(priv)
}

// trustBundle is what the gateway judges keys by: the node's signing
// key, nothing revoked, the built-in roles, and the namespaces served.
func trustBundle(pub ed25519.PublicKey, namespaces []string) (wire.TrustBundle, error) {
	jwks, err := json.Marshal(tenancy.JWKS{Keys: []tenancy.JWK{tenancy.NewJWK(signingKeyID, pub)}})
	if err != nil {
		return wire.TrustBundle{}, err
	}
	b := wire.TrustBundle{TenantID: tenantID, ShardID: shardID, IssuedAt: time.Now(), JWKS: jwks,
		Revocations: wire.Revocations{Version: 1, Revoked: []string{}}, Roles: wire.TenantRoles{Roles: []wire.Role{}}}
	for _, ns := range namespaces {
		b.Namespaces = append(b.Namespaces, wire.NamespacePlacement{Namespace: wire.Namespace{Name: ns}, ShardID: shardID})
	}
	return b, nil
}

// readOrCreate reads the secret kept in path, or makes it and writes it
// there, readable by the owner only.
func readOrCreate(path string, make func() (string, error)) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	v, err := make()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	return v, atomicfile.Write(path, []byte(v+"\n"), 0o600)
}

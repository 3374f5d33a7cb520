package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/shard/envelope"
	"github.com/jobbie/jobbie/wire"
)

// A namespace's encryption at rest (GET and PUT /api/v1/encryption). This
// file makes, wraps and rewraps the keys and proposes the whole record;
// sealing.go seals and opens the values with them. The proposer holds the
// only keys in the clear, in memory: the record, and so the log, the
// store, snapshots and backups, holds them wrapped.

// Encryption is the namespace's settings, never a key.
func (s *Service) Encryption(ns string) (*wire.Encryption, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	rec, _ := engine.ReadEncryption(s.node.DB(), ns)
	return encryptionView(&rec), nil
}

// SetEncryption changes the namespace's settings: enable or disable
// sealing and search over opened payloads, supply or rotate the tenant's
// key (the namespace key is wrapped again; nothing stored changes), or
// revoke it (its keys are deleted: what they sealed is unreadable).
func (s *Service) SetEncryption(ctx context.Context, ns string, r *wire.EncryptionRequest) (*wire.Encryption, error) {
	if err := namespaceOK(ns); err != nil {
		return nil, err
	}
	var tenant *envelope.Key
	if r.TenantKey != nil {
		if r.RevokeTenantKey {
			return nil, apierr.Field("revoke_tenant_key", "revoke_tenant_key and tenant_key cannot go together: revoke, then supply a new key")
		}
		k, err := envelope.ParseKey(*r.TenantKey)
		if err != nil {
			return nil, apierr.Field("tenant_key", "tenant_key: %v", err)
		}
		tenant = &k
	}
	if s.cfg.MasterKey == nil {
		return nil, apierr.New(apierr.EncryptionOff, "this shard has no master key (the operator's shard.encryption_master_key_file): its namespaces cannot encrypt")
	}
	old, _ := engine.ReadEncryption(s.node.DB(), ns)
	rec, err := s.changeKeys(ns, old, r, tenant)
	if err != nil {
		return nil, err
	}
	out, err := engine.NamespaceEncryption.Propose(ctx, s.node, &engine.EncryptionCmd{NS: ns, Prev: old.Version, Record: rec})
	if err != nil {
		return nil, err
	}
	return encryptionView(out), nil
}

// changeKeys returns old as r changes it, with keys made or wrapped anew.
func (s *Service) changeKeys(ns string, old engine.EncryptionRecord, r *wire.EncryptionRequest, tenant *envelope.Key) (engine.EncryptionRecord, error) {
	rec := old
	if r.Enabled != nil {
		rec.Enabled = *r.Enabled
	}
	if r.SearchDecrypt != nil {
		rec.SearchDecrypt = *r.SearchDecrypt
	}
	master := *s.cfg.MasterKey
	switch {
	case r.RevokeTenantKey:
		if old.TenantKey == nil {
			return rec, apierr.Field("revoke_tenant_key", "the namespace has no tenant key to revoke")
		}
		rec.Revoked = append(append([]engine.RevokedKey(nil), old.Revoked...), engine.RevokedKey{Gen: old.Gen, KeyID: old.TenantKeyID, At: s.now()})
		rec.DataKey, rec.NSKeyMaster, rec.NSKeyTenant, rec.TenantKey, rec.TenantKeyID = nil, nil, nil, nil, ""
		return rec, nil
	case old.DataKey == nil && (tenant != nil || old.Gen == 0 && rec.Enabled):
		// A first generation, or the next after a revoke: only a new
		// tenant key ends a revoke (docs/api/encryption.md), so no other
		// change makes keys the tenant did not give.
		if rec.Keyspace == "" {
			rec.Keyspace = newKeyspace()
		}
		rec.Gen = old.Gen + 1
		nsKey, dataKey := envelope.NewKey(), envelope.NewKey()
		rec.DataKey = envelope.Wrap(nsKey, dataKey, keyLabel(&rec, "data"))
		wrapNamespaceKey(&rec, master, nsKey, tenant)
	case tenant != nil:
		// A rotation, or a first tenant key over the operator's.
		nsKey, err := s.namespaceKey(&old)
		if err != nil {
			return rec, err
		}
		wrapNamespaceKey(&rec, master, nsKey, tenant)
	}
	return rec, nil
}

// wrapNamespaceKey wraps nsKey by the tenant's key, itself wrapped by the
// master key, or by the master key when the tenant gives none and had
// none; a rotation keeps no trace of the key before.
func wrapNamespaceKey(rec *engine.EncryptionRecord, master, nsKey envelope.Key, tenant *envelope.Key) {
	if tenant == nil && rec.TenantKey == nil {
		rec.NSKeyMaster, rec.NSKeyTenant = envelope.Wrap(master, nsKey, keyLabel(rec, "namespace")), nil
		return
	}
	if tenant == nil {
		return // the tenant's key wraps it already
	}
	rec.NSKeyMaster = nil
	rec.NSKeyTenant = envelope.Wrap(*tenant, nsKey, keyLabel(rec, "namespace"))
	rec.TenantKey = envelope.Wrap(master, *tenant, "space/"+rec.Keyspace+"/tenant")
	rec.TenantKeyID = tenant.ID()
}

// namespaceKey opens rec's namespace key with the master key, through
// the tenant's key when it has one.
func (s *Service) namespaceKey(rec *engine.EncryptionRecord) (envelope.Key, error) {
	master := *s.cfg.MasterKey
	wrapped, kek := rec.NSKeyMaster, master
	if rec.NSKeyTenant != nil {
		t, err := envelope.Unwrap(master, rec.TenantKey, "space/"+rec.Keyspace+"/tenant")
		if err != nil {
			return envelope.Key{}, masterMismatch()
		}
		wrapped, kek = rec.NSKeyTenant, t
	}
	k, err := envelope.Unwrap(kek, wrapped, keyLabel(rec, "namespace"))
	if err != nil {
		return envelope.Key{}, masterMismatch()
	}
	return k, nil
}

func masterMismatch() error {
	return apierr.New(apierr.EncryptionOff, "this shard's master key does not open the namespace's keys: its nodes must share the master key the keys were made under")
}

// keyLabel binds a wrapped key to its key space, generation and use.
func keyLabel(rec *engine.EncryptionRecord, use string) string {
	return "space/" + rec.Keyspace + "/g" + strconv.FormatUint(uint64(rec.Gen), 10) + "/" + use
}

func newKeyspace() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func encryptionView(rec *engine.EncryptionRecord) *wire.Encryption {
	v := &wire.Encryption{Enabled: rec.Enabled, SearchDecrypt: rec.SearchDecrypt, KeySource: wire.KeySourceNone,
		Generation: int(rec.Gen), RevokedKeys: make([]wire.EncryptionRevokedKey, 0, len(rec.Revoked)), UpdatedAt: ts(rec.UpdatedAt)}
	switch {
	case rec.TenantKey != nil:
		v.KeySource, v.TenantKeyID = wire.KeySourceTenant, &rec.TenantKeyID
	case rec.NSKeyMaster != nil:
		v.KeySource = wire.KeySourceOperator
	case len(rec.Revoked) > 0:
		v.KeySource = wire.KeySourceRevoked
	}
	for _, k := range rec.Revoked {
		v.RevokedKeys = append(v.RevokedKeys, wire.EncryptionRevokedKey{KeyID: k.KeyID, Generation: int(k.Gen), RevokedAt: time.Unix(0, k.At).UTC()})
	}
	return v
}

package controlfake

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// Tenants' API keys: minted and rotated with the fake's signer, revoked
// into the revocation list.

func (fc *Control) ListKeys(_ context.Context, _, tid string) (wire.KeyList, error) {
	tid = strings.Clone(tid)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.KeyList{}, err
	}
	keys := fc.keys[tid]
	if keys == nil {
		keys = []wire.Key{}
	}
	return clone(wire.KeyList{Keys: keys}), nil
}

func (fc *Control) CreateKey(ctx context.Context, _, tid string, in wire.CreateKeyRequest) (wire.CreatedKey, error) {
	tid = strings.Clone(tid)
	return keyed(fc, ctx, tid, "keys", func() (wire.CreatedKey, error) { return fc.createKey(tid, in) })
}

func (fc *Control) createKey(tid string, in wire.CreateKeyRequest) (wire.CreatedKey, error) {
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.CreatedKey{}, err
	}
	if e := fc.KeysRefused[tid]; e != nil {
		return wire.CreatedKey{}, refuse(e)
	}
	in = clone(in)
	fc.lastKeyReq = in
	fc.nextID++
	m := wire.Key{ID: fmt.Sprintf("key_%d", fc.nextID), Name: in.Name, Role: in.Role, Namespaces: in.Namespaces, CreatedAt: Jan(3)}
	claims := Claims(tid, m.ID, tenancy.Role(m.Role), m.Namespaces...)
	if in.ExpiresAt != nil {
		var exp time.Time
		if err := json.Unmarshal(in.ExpiresAt, &exp); err != nil {
			return wire.CreatedKey{}, refuse(apierr.Field("expires_at", "expires_at must be an RFC 3339 time"))
		}
		exp = exp.UTC()
		m.ExpiresAt = &exp
		claims.ExpiresAt = jwt.NewNumericDate(exp)
	}
	fc.keys[tid] = append(fc.keys[tid], m)
	return clone(wire.CreatedKey{Key: m, Token: fc.signer.Sign(claims)}), nil
}

func (fc *Control) findKeyLocked(tid, id string) int {
	return slices.IndexFunc(fc.keys[tid], func(k wire.Key) bool { return k.ID == id })
}

func (fc *Control) Key(_ context.Context, _, tid, id string) (wire.Key, error) {
	tid, id = strings.Clone(tid), strings.Clone(id)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.Key{}, err
	}
	i := fc.findKeyLocked(tid, id)
	if i < 0 {
		return wire.Key{}, refuse(apierr.New(apierr.NotFound, "key not found"))
	}
	return clone(fc.keys[tid][i]), nil
}

func (fc *Control) DeleteKey(_ context.Context, _, tid, id string) error {
	tid, id = strings.Clone(tid), strings.Clone(id)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return err
	}
	i := fc.findKeyLocked(tid, id)
	if i < 0 {
		return refuse(apierr.New(apierr.NotFound, "key not found"))
	}
	fc.keys[tid] = slices.Delete(fc.keys[tid], i, i+1)
	fc.revokeLocked(id)
	return nil
}

// RotateKey signs the key again with its next generation; the replaced
// secret works for the grace period asked (whole seconds).
func (fc *Control) RotateKey(_ context.Context, _, tid, id string, in wire.RotateKeyRequest) (wire.RotatedKey, error) {
	tid, id = strings.Clone(tid), strings.Clone(id)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.RotatedKey{}, err
	}
	i := fc.findKeyLocked(tid, id)
	if i < 0 {
		return wire.RotatedKey{}, refuse(apierr.New(apierr.NotFound, "key not found"))
	}
	grace, _, err := wire.ParseDuration(in.GracePeriod)
	if err != nil {
		return wire.RotatedKey{}, refuse(apierr.Field("grace_period", "bad grace_period"))
	}
	ks := fc.rotated[id]
	ks.KeyID = id
	now := time.Now().UTC()
	until := now.Add(grace)
	if grace > 0 {
		ks.Grace = append(ks.Grace, wire.GraceSecret{Generation: ks.Generation, Until: until})
	}
	ks.Generation++
	fc.rotated[id] = ks
	fc.version++
	k := fc.keys[tid][i]
	k.RotatedAt = &now
	fc.keys[tid][i] = k
	claims := Claims(tid, id, tenancy.Role(k.Role), k.Namespaces...)
	claims.ID = strconv.FormatUint(ks.Generation, 10)
	if k.ExpiresAt != nil {
		claims.ExpiresAt = jwt.NewNumericDate(*k.ExpiresAt)
	}
	return clone(wire.RotatedKey{Key: k, Token: fc.signer.Sign(claims), PreviousKeyValidUntil: until}), nil
}

// AddKey records a key of tenant tid.
func (fc *Control) AddKey(tid string, k wire.Key) {
	fc.Lock()
	defer fc.Unlock()
	fc.keys[tid] = append(fc.keys[tid], k)
}

// TenantKeys are tenant tid's keys.
func (fc *Control) TenantKeys(tid string) []wire.Key {
	fc.Lock()
	defer fc.Unlock()
	return slices.Clone(fc.keys[tid])
}

// LastKeyRequest is the last key creation control was sent.
func (fc *Control) LastKeyRequest() wire.CreateKeyRequest {
	fc.Lock()
	defer fc.Unlock()
	return fc.lastKeyReq
}

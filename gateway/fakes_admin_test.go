package gateway

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// The fake control's namespace settings, single keys, rotations and key
// usage: the shapes control answers, without its checks beyond what
// gateway tests need.

func (fc *fakeControl) adminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("PATCH /internal/v1/tenants/{tid}/namespaces/{ns}", fc.internal(fc.patchNamespace))
	mux.HandleFunc("DELETE /internal/v1/tenants/{tid}/namespaces/{ns}", fc.internal(fc.deleteNamespace))
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/keys/{id}", fc.internal(fc.getKey))
	mux.HandleFunc("POST /internal/v1/tenants/{tid}/keys/{id}/rotate", fc.internal(fc.rotateKey))
	mux.HandleFunc("POST /internal/v1/keys/used", fc.internal(fc.keysUsed))
}

// view is the namespace as control shows it.
func (pl fakePlacement) view(name string) wire.Namespace {
	v := pl.settings
	v.Name = name
	if v.CreatedAt.IsZero() {
		v.CreatedAt = jan(1)
	}
	return v
}

func (fc *fakeControl) patchNamespace(w http.ResponseWriter, r *http.Request) {
	tid, name := r.PathValue("tid"), r.PathValue("ns")
	pl, ok := fc.namespaces[tid][name]
	if !ok {
		writeErr(w, apierr.New(apierr.NotFound, "namespace not found"))
		return
	}
	var in wire.UpdateNamespaceRequest
	_ = json.NewDecoder(r.Body).Decode(&in)
	fc.lastPatch = in
	v := pl.view(name)
	if len(in.Description) > 0 && json.Unmarshal(in.Description, &v.Description) != nil {
		writeErr(w, apierr.Field("description", "description must be a string"))
		return
	}
	if len(in.Retention) > 0 {
		v.Retention = ""
		_ = json.Unmarshal(in.Retention, &v.Retention)
	}
	if len(in.DeletionProtection) > 0 {
		v.DeletionProtection = false
		_ = json.Unmarshal(in.DeletionProtection, &v.DeletionProtection)
	}
	pl.settings = v
	fc.namespaces[tid][name] = pl
	writeJSON(w, http.StatusOK, wire.NamespacePlacement{Namespace: v, ShardID: pl.shardID})
}

func (fc *fakeControl) deleteNamespace(w http.ResponseWriter, r *http.Request) {
	tid, name := r.PathValue("tid"), r.PathValue("ns")
	pl, ok := fc.namespaces[tid][name]
	switch {
	case !ok:
		writeErr(w, apierr.New(apierr.NotFound, "namespace not found"))
	case pl.settings.DeletionProtection:
		writeErr(w, apierr.New(apierr.DeletionProtected, "protected"))
	default:
		delete(fc.namespaces[tid], name)
		w.WriteHeader(http.StatusNoContent)
	}
}

func (fc *fakeControl) findKeyLocked(tid, id string) int {
	return slices.IndexFunc(fc.keys[tid], func(k wire.Key) bool { return k.ID == id })
}

func (fc *fakeControl) getKey(w http.ResponseWriter, r *http.Request) {
	tid := r.PathValue("tid")
	i := fc.findKeyLocked(tid, r.PathValue("id"))
	if i < 0 {
		writeErr(w, apierr.New(apierr.NotFound, "key not found"))
		return
	}
	writeJSON(w, http.StatusOK, fc.keys[tid][i])
}

// rotateKey signs the key again with its next generation; the replaced
// secret works for the grace period asked (whole seconds).
func (fc *fakeControl) rotateKey(w http.ResponseWriter, r *http.Request) {
	tid, id := r.PathValue("tid"), r.PathValue("id")
	i := fc.findKeyLocked(tid, id)
	if i < 0 {
		writeErr(w, apierr.New(apierr.NotFound, "key not found"))
		return
	}
	var in wire.RotateKeyRequest
	_ = json.NewDecoder(r.Body).Decode(&in)
	grace, _, err := wire.ParseDuration(in.GracePeriod)
	if err != nil {
		writeErr(w, apierr.Field("grace_period", "bad grace_period"))
		return
	}
	if fc.rotated == nil {
		fc.rotated = map[string]wire.KeySecrets{}
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
	claims := claimsFor(tid, id, tenancy.Role(k.Role), k.Namespaces...)
	claims.ID = strconv.FormatUint(ks.Generation, 10)
	if k.ExpiresAt != nil {
		claims.ExpiresAt = jwt.NewNumericDate(*k.ExpiresAt)
	}
	writeJSON(w, http.StatusOK, wire.RotatedKey{Key: k, Token: fc.signer.sign(fc.t, claims), PreviousKeyValidUntil: until})
}

func (fc *fakeControl) keysUsed(w http.ResponseWriter, r *http.Request) {
	var in wire.KeyUsage
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || len(in.Keys) > wire.MaxKeyUses {
		writeErr(w, apierr.Field("keys", "bad report"))
		return
	}
	fc.uses = append(fc.uses, in.Keys...)
	w.WriteHeader(http.StatusNoContent)
}

// keyUses is what gateways reported, in order.
func (fc *fakeControl) keyUses() []wire.KeyUse {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return slices.Clone(fc.uses)
}

func (fc *fakeControl) lastPatchRequest() wire.UpdateNamespaceRequest {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.lastPatch
}

// protect sets a namespace's deletion protection.
func (fc *fakeControl) protect(tid, ns string, on bool) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	pl := fc.namespaces[tid][ns]
	pl.settings.DeletionProtection = on
	fc.namespaces[tid][ns] = pl
}

// move says whether a live move of a namespace runs.
func (fc *fakeControl) move(tid, ns string, on bool) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	pl := fc.namespaces[tid][ns]
	pl.moving = on
	fc.namespaces[tid][ns] = pl
}

// unjoin says the namespace is on a self-hosted shard no node joined.
func (fc *fakeControl) unjoin(tid, ns string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	pl := fc.namespaces[tid][ns]
	pl.unjoined = true
	fc.namespaces[tid][ns] = pl
}

// placeNewOn places the namespaces created from now on on shard s1, at addr.
func (fc *fakeControl) placeNewOn(addr string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.newShardAddr = addr
}

func (fc *fakeControl) namespaceSettings(tid, ns string) wire.Namespace {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.namespaces[tid][ns].settings
}

func (fc *fakeControl) hasNamespace(tid, ns string) bool {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	_, ok := fc.namespaces[tid][ns]
	return ok
}

// retire lists a signing key as retiring at at.
func (fc *fakeControl) retire(kid string, at time.Time) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.retiring = append(fc.retiring, wire.RetiringSigningKey{Kid: kid, RetiresAt: at})
	fc.version++
}

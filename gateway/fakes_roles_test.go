package gateway

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// The fake control's custom roles: kept per tenant with a version per
// tenant that the revocation list carries, as control does, and checked
// no further than gateway tests need.

func (fc *fakeControl) roleRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/roles", fc.internal(fc.listRoles))
	mux.HandleFunc("POST /internal/v1/tenants/{tid}/roles", fc.internal(fc.postRole))
	mux.HandleFunc("GET /internal/v1/tenants/{tid}/roles/{name}", fc.internal(fc.getRole))
	mux.HandleFunc("PUT /internal/v1/tenants/{tid}/roles/{name}", fc.internal(fc.putRole))
	mux.HandleFunc("DELETE /internal/v1/tenants/{tid}/roles/{name}", fc.internal(fc.deleteRole))
}

func (fc *fakeControl) listRoles(w http.ResponseWriter, r *http.Request) {
	fc.roleFetches.Add(1)
	tid := r.PathValue("tid")
	out := wire.TenantRoles{Roles: []wire.Role{}, Version: fc.rolesVersion[tid]}
	for _, role := range fc.roles[tid] {
		out.Roles = append(out.Roles, role)
	}
	slices.SortFunc(out.Roles, func(a, b wire.Role) int { return strings.Compare(a.Name, b.Name) })
	writeJSON(w, http.StatusOK, out)
}

func (fc *fakeControl) getRole(w http.ResponseWriter, r *http.Request) {
	role, ok := fc.roles[r.PathValue("tid")][r.PathValue("name")]
	if !ok {
		writeErr(w, apierr.New(apierr.NotFound, "role not found"))
		return
	}
	writeJSON(w, http.StatusOK, role)
}

func (fc *fakeControl) postRole(w http.ResponseWriter, r *http.Request) {
	var in wire.RoleRequest
	_ = json.NewDecoder(r.Body).Decode(&in)
	tid := r.PathValue("tid")
	if _, ok := fc.roles[tid][in.Name]; ok {
		writeErr(w, apierr.New(apierr.Conflict, "role exists"))
		return
	}
	role := fc.putRoleLocked(tid, in.Name, in)
	writeJSON(w, http.StatusCreated, wire.RoleChanged{Role: role, RolesVersion: fc.rolesVersion[tid]})
}

func (fc *fakeControl) putRole(w http.ResponseWriter, r *http.Request) {
	var in wire.RoleRequest
	_ = json.NewDecoder(r.Body).Decode(&in)
	tid, name := r.PathValue("tid"), r.PathValue("name")
	if _, ok := fc.roles[tid][name]; !ok {
		writeErr(w, apierr.New(apierr.NotFound, "role not found"))
		return
	}
	role := fc.putRoleLocked(tid, name, in)
	writeJSON(w, http.StatusOK, wire.RoleChanged{Role: role, RolesVersion: fc.rolesVersion[tid]})
}

func (fc *fakeControl) deleteRole(w http.ResponseWriter, r *http.Request) {
	tid, name := r.PathValue("tid"), r.PathValue("name")
	if _, ok := fc.roles[tid][name]; !ok {
		writeErr(w, apierr.New(apierr.NotFound, "role not found"))
		return
	}
	for _, k := range fc.keys[tid] {
		if k.Role == name {
			writeErr(w, apierr.New(apierr.RoleInUse, "role %q is carried by 1 live API keys", name))
			return
		}
	}
	delete(fc.roles[tid], name)
	fc.bumpRolesLocked(tid)
	writeJSON(w, http.StatusOK, wire.RolesVersion{Version: fc.rolesVersion[tid]})
}

// putRoleLocked stores a role and moves the tenant's roles version.
func (fc *fakeControl) putRoleLocked(tid, name string, in wire.RoleRequest) wire.Role {
	if fc.roles[tid] == nil {
		fc.roles[tid] = map[string]wire.Role{}
	}
	at := jan(4)
	role := wire.Role{Name: name, Description: in.Description, Permissions: in.Permissions, CreatedAt: &at, UpdatedAt: &at}
	fc.roles[tid][name] = role
	fc.bumpRolesLocked(tid)
	return role
}

func (fc *fakeControl) bumpRolesLocked(tid string) {
	fc.rolesVersion[tid]++
	fc.version++
}

// setRole defines a role as another gateway would have: this one learns
// of it from the revocation list.
func (fc *fakeControl) setRole(tid, name string, perms ...wire.Permission) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.putRoleLocked(tid, name, wire.RoleRequest{Permissions: perms})
}

// dropRole deletes a role as another gateway would have.
func (fc *fakeControl) dropRole(tid, name string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	delete(fc.roles[tid], name)
	fc.bumpRolesLocked(tid)
}

// rolesVersions is what the revocation list says of roles.
func (fc *fakeControl) rolesVersionsLocked() []wire.RolesVersion {
	var out []wire.RolesVersion
	for tid, v := range fc.rolesVersion {
		out = append(out, wire.RolesVersion{TenantID: tid, Version: v})
	}
	return out
}

// wireRoles is control's answer with one role at version.
func wireRoles(version uint64, name string, ps ...wire.Permission) wire.TenantRoles {
	return wire.TenantRoles{Version: version, Roles: []wire.Role{{Name: name, Permissions: ps}}}
}

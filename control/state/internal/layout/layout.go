// Package layout is the control plane's Pebble key layout: one encode and,
// where needed, one decode function per key kind. It is an on-disk format:
// never change a prefix byte or an encoding, only add new ones.
//
// Keys are a prefix byte followed by string components joined by 0x00.
// Component strings are validated names and ids that never hold 0x00, so
// the separator sorts below every character and byte order is the order of
// the components: a tenant's namespaces are contiguous and sorted by name,
// its keys by id (ULIDs, so by creation time).
package layout

import (
	"bytes"
	"encoding/binary"
	"time"
)

// Prefix bytes; 0x00 belongs to the replica host and is never used here.
const (
	prefixMeta       byte = 0x01 // singletons, by name
	prefixTenant     byte = 0x10 // tenant id → tenant
	prefixTenantName byte = 0x11 // tenant name → tenant id
	prefixNamespace  byte = 0x12 // tenant id, name → namespace
	prefixKey        byte = 0x13 // tenant id ("" for operator keys), key id → key metadata
	prefixRevoked    byte = 0x14 // key id → revocation time
	prefixSigning    byte = 0x15 // signing key id → signing key
	prefixShardLoad  byte = 0x16 // shard id → number of namespaces placed on it
	prefixShard      byte = 0x17 // shard id → registered shard cluster
	prefixRotated    byte = 0x18 // key id → the working secrets of a rotated key
	prefixKeyUsed    byte = 0x19 // tenant id, key id → when a gateway last saw the key (unix nanoseconds)
	prefixRole       byte = 0x1a // tenant id, role name → custom role
	prefixRolesVer   byte = 0x1b // tenant id → the version of its custom roles (uint64)
	prefixUsage      byte = 0x1c // tenant id, namespace, hour, shard id → the shard's meters of that hour
	prefixAPIReqs    byte = 0x1d // tenant id, hour, gateway instance → api requests the gateway admitted
	prefixPullCursor byte = 0x1e // shard id → the metering puller's cursor for the shard
	prefixPlan       byte = 0x1f // plan name, version → that version of the plan
	prefixTenantPlan byte = 0x20 // tenant id, hour → the plan the tenant is on from that hour
	prefixInvoice    byte = 0x21 // tenant id, month → the invoice frozen for that month (JSON)
	prefixBackup     byte = 0x22 // tenant id, backup id → the backup's catalog record (JSON)
	prefixBackupPol  byte = 0x23 // tenant id, namespace → the namespace's backup policy (JSON)
)

const sep = 0x00

func key(prefix byte, parts ...string) []byte {
	n := 1
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, prefix)
	for i, p := range parts {
		if i > 0 {
			b = append(b, sep)
		}
		b = append(b, p...)
	}
	return b
}

// within is the prefix of every key below parts: parts then a separator.
func within(prefix byte, parts ...string) []byte {
	return append(key(prefix, parts...), sep)
}

// last returns the final component of k.
func last(k []byte) string {
	if i := bytes.LastIndexByte(k, sep); i >= 0 {
		return string(k[i+1:])
	}
	return string(k[1:])
}

// RevocationVersion holds the revocation list's version (uint64).
func RevocationVersion() []byte { return key(prefixMeta, "revocation_version") }

// ActiveSigningKey holds the id of the key that signs new API keys.
func ActiveSigningKey() []byte { return key(prefixMeta, "active_signing_key") }

// Tenant is the key of a tenant record.
func Tenant(id string) []byte { return key(prefixTenant, id) }

// Tenants is the prefix of every tenant record.
func Tenants() []byte { return []byte{prefixTenant} }

// TenantName maps a tenant name to its id.
func TenantName(name string) []byte { return key(prefixTenantName, name) }

// Namespace is the key of namespace name of tenant tid.
func Namespace(tid, name string) []byte { return key(prefixNamespace, tid, name) }

// Namespaces is the prefix of every namespace of tenant tid.
func Namespaces(tid string) []byte { return within(prefixNamespace, tid) }

// NamespaceName decodes the namespace name of a Namespace key.
func NamespaceName(k []byte) string { return last(k) }

// Key is the key of API key id of tenant tid ("" for operator keys).
func Key(tid, id string) []byte { return key(prefixKey, tid, id) }

// Keys is the prefix of every API key of tenant tid.
func Keys(tid string) []byte { return within(prefixKey, tid) }

// KeyID decodes the key id of a Key key.
func KeyID(k []byte) string { return last(k) }

// Revoked marks key id as revoked.
func Revoked(id string) []byte { return key(prefixRevoked, id) }

// RevokedKeys is the prefix of every revocation.
func RevokedKeys() []byte { return []byte{prefixRevoked} }

// RevokedID decodes the key id of a Revoked key.
func RevokedID(k []byte) string { return last(k) }

// Rotated holds which secrets of rotated key id work.
func Rotated(id string) []byte { return key(prefixRotated, id) }

// RotatedKeys is the prefix of every rotated key's secrets.
func RotatedKeys() []byte { return []byte{prefixRotated} }

// KeyUsed holds when key id of tenant tid was last seen in use.
func KeyUsed(tid, id string) []byte { return key(prefixKeyUsed, tid, id) }

// Role is the key of custom role name of tenant tid.
func Role(tid, name string) []byte { return key(prefixRole, tid, name) }

// Roles is the prefix of every custom role of tenant tid.
func Roles(tid string) []byte { return within(prefixRole, tid) }

// RolesVersion holds the version of tenant tid's custom roles, which
// grows by one with each change of one of them.
func RolesVersion(tid string) []byte { return key(prefixRolesVer, tid) }

// RolesVersions is the prefix of every tenant's roles version.
func RolesVersions() []byte { return []byte{prefixRolesVer} }

// RolesVersionTenant decodes the tenant id of a RolesVersion key.
func RolesVersionTenant(k []byte) string { return last(k) }

// SigningKey is the key of a signing key record.
func SigningKey(kid string) []byte { return key(prefixSigning, kid) }

// SigningKeys is the prefix of every signing key.
func SigningKeys() []byte { return []byte{prefixSigning} }

// ShardLoad counts the namespaces placed on shard id.
func ShardLoad(id string) []byte { return key(prefixShardLoad, id) }

// ShardLoads is the prefix of every shard's namespace count.
func ShardLoads() []byte { return []byte{prefixShardLoad} }

// ShardLoadID decodes the shard id of a ShardLoad key.
func ShardLoadID(k []byte) string { return last(k) }

// Shard is the key of a registered shard cluster's record.
func Shard(id string) []byte { return key(prefixShard, id) }

// Shards is the prefix of every registered shard cluster.
func Shards() []byte { return []byte{prefixShard} }

// Hour is how an hour is written inside a key: its start in UTC as
// "2006010215", ten digits, so byte order is time order (for years 1000
// to 9999) and no component holds the separator.
func Hour(t time.Time) string { return t.UTC().Format(hourFormat) }

// ParseHour decodes an hour written by Hour.
func ParseHour(s string) (time.Time, error) { return time.Parse(hourFormat, s) }

const hourFormat = "2006010215"

// Usage is the key of shard's meters of namespace ns of tenant tid in the
// hour starting at hour: a tenant's entries sort by namespace, then hour,
// then shard.
func Usage(tid, ns string, hour time.Time, shard string) []byte {
	return key(prefixUsage, tid, ns, Hour(hour), shard)
}

// TenantUsage is the prefix of every usage entry of tenant tid.
func TenantUsage(tid string) []byte { return within(prefixUsage, tid) }

// NamespaceUsage is the prefix of every usage entry of namespace ns of
// tenant tid.
func NamespaceUsage(tid, ns string) []byte { return within(prefixUsage, tid, ns) }

// NamespaceUsageFrom is the first key of namespace ns's entries of hours
// at or after hour.
func NamespaceUsageFrom(tid, ns string, hour time.Time) []byte {
	return within(prefixUsage, tid, ns, Hour(hour))
}

// UsageParts decodes a Usage key of tenant tid (whose prefix the caller
// matched): the namespace, the hour and the shard id.
func UsageParts(tid string, k []byte) (ns, hour, shard string, ok bool) {
	rest := k[len(TenantUsage(tid)):]
	parts := bytes.Split(rest, []byte{sep})
	if len(parts) != 3 {
		return "", "", "", false
	}
	return string(parts[0]), string(parts[1]), string(parts[2]), true
}

// APIRequests is the key of the api requests gateway instance gw admitted
// for tenant tid in the hour starting at hour (a uint64).
func APIRequests(tid string, hour time.Time, gw string) []byte {
	return key(prefixAPIReqs, tid, Hour(hour), gw)
}

// TenantAPIRequestsFrom is the first key of tenant tid's api request
// counts of hours at or after hour; TenantAPIRequests is the prefix of
// them all.
func TenantAPIRequestsFrom(tid string, hour time.Time) []byte {
	return within(prefixAPIReqs, tid, Hour(hour))
}

// TenantAPIRequests is the prefix of every api request count of tenant tid.
func TenantAPIRequests(tid string) []byte { return within(prefixAPIReqs, tid) }

// APIRequestsHour decodes the hour component of an APIRequests key of
// tenant tid.
func APIRequestsHour(tid string, k []byte) string {
	rest := k[len(TenantAPIRequests(tid)):]
	if i := bytes.IndexByte(rest, sep); i >= 0 {
		return string(rest[:i])
	}
	return string(rest)
}

// PullCursor is the key of the metering puller's cursor for shard id.
func PullCursor(id string) []byte { return key(prefixPullCursor, id) }

// PullCursors is the prefix of every shard's pull cursor.
func PullCursors() []byte { return []byte{prefixPullCursor} }

// PullCursorShard decodes the shard id of a PullCursor key.
func PullCursorShard(k []byte) string { return last(k) }

// PrefixEnd is the smallest key above every key that starts with prefix,
// for use as an iterator's upper bound.
func PrefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// Uint64 encodes a counter value, big-endian.
func Uint64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// DecodeUint64 decodes a counter value; a missing or short value is 0.
func DecodeUint64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// MemberHTTP is where a control node's HTTP address is kept, so a
// follower finds the leader's without gossip.
func MemberHTTP(nodeID string) []byte { return key(prefixMeta, "member_http", nodeID) }

package state

import (
	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state/internal/layout"
)

// Small reads the proposers and the leader's runners make of the state.

// ListAllBackups is every backup of every tenant, by tenant then id.
func ListAllBackups(r pebble.Reader) ([]BackupRecord, error) {
	var out []BackupRecord
	err := scanJSON(r, layout.AllBackups(), func(_ []byte, b BackupRecord) { out = append(out, b) })
	return out, err
}

// ListBackupPolicies is every namespace's backup policy.
func ListBackupPolicies(r pebble.Reader) ([]BackupPolicy, error) {
	var out []BackupPolicy
	err := scanJSON(r, layout.AllBackupPolicies(), func(_ []byte, p BackupPolicy) { out = append(out, p) })
	return out, err
}

// MemberHTTP is where control member id serves HTTP, as it recorded it.
func MemberHTTP(r pebble.Reader, id string) (string, bool, error) {
	b, ok, err := getRaw(r, layout.MemberHTTP(id))
	return string(b), ok, err
}

// LoadJoinToken is the join token whose hash is hash.
func LoadJoinToken(r pebble.Reader, hash string) (JoinToken, bool, error) {
	var t JoinToken
	ok, err := getJSON(r, layout.JoinToken(hash), &t)
	return t, ok, err
}

// ListOwnedShards is tenant tid's self-hosted shards, by id.
func ListOwnedShards(r pebble.Reader, tid string) ([]OwnedShard, error) {
	var out []OwnedShard
	err := scanJSON(r, layout.OwnedShards(tid), func(_ []byte, sh OwnedShard) { out = append(out, sh) })
	return out, err
}

// ListAllOwnedShards is every tenant's self-hosted shards.
func ListAllOwnedShards(r pebble.Reader) ([]OwnedShard, error) {
	var out []OwnedShard
	err := scanJSON(r, layout.AllOwnedShards(), func(_ []byte, sh OwnedShard) { out = append(out, sh) })
	return out, err
}

// RolesVersion is the version of tenant tid's custom roles.
func RolesVersion(r pebble.Reader, tid string) (uint64, error) {
	return getUint64(r, layout.RolesVersion(tid))
}

// ShardLoads is how many namespaces are placed on each shard that holds
// any, in shard id order.
func ShardLoads(r pebble.Reader) (ids []string, loads []uint64, err error) {
	err = scan(r, layout.ShardLoads(), func(k, v []byte) error {
		ids = append(ids, layout.ShardLoadID(k))
		loads = append(loads, layout.DecodeUint64(v))
		return nil
	})
	return ids, loads, err
}

// IsRevoked reports whether API key id is revoked.
func IsRevoked(r pebble.Reader, id string) (bool, error) { return Exists(r, layout.Revoked(id)) }

// ActiveSigningKeyID is the id of the key that signs new API keys.
func ActiveSigningKeyID(r pebble.Reader) (string, error) {
	b, _, err := getRaw(r, layout.ActiveSigningKey())
	return string(b), err
}

// MonthKey is how a month is written in keys and logs: "2006-01", UTC.
func MonthKey(unixMonth int64) string { return layout.Month(UnixHour(unixMonth)) }

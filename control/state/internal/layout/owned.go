package layout

// Self-hosted (tenant-owned) shards and their join tokens. Prefixes
// continue layout.go's list.
const (
	prefixOwnedShard byte = 0x24 // tenant id, shard id → the tenant's self-hosted shard (JSON)
	prefixShardOwner byte = 0x25 // shard id → owning tenant id
	prefixJoinToken  byte = 0x26 // token hash (hex) → the join token's record (JSON)
)

// OwnedShard is a tenant's self-hosted shard.
func OwnedShard(tid, id string) []byte { return key(prefixOwnedShard, tid, id) }

// OwnedShards prefixes a tenant's self-hosted shards.
func OwnedShards(tid string) []byte { return within(prefixOwnedShard, tid) }

// AllOwnedShards prefixes every tenant's self-hosted shards.
func AllOwnedShards() []byte { return []byte{prefixOwnedShard} }

// ShardOwner is the tenant that owns self-hosted shard id.
func ShardOwner(id string) []byte { return key(prefixShardOwner, id) }

// JoinToken is a join token's record, by the hex SHA-256 of the token.
func JoinToken(hash string) []byte { return key(prefixJoinToken, hash) }

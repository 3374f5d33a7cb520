package provider

// ShardByID lets the acceptance tests (package provider_test) find a shard
// in a listing the way the provider does.
var ShardByID = shardByID

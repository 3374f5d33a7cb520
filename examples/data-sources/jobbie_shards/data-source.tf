data "jobbie_shards" "dc1" {
  name = "dc1"
}

# The nodes of shard dc1 that hold no tunnel to the answering gateway.
output "dc1_not_connected" {
  value = [for n in data.jobbie_shards.dc1.shards[0].nodes : n if !contains(data.jobbie_shards.dc1.shards[0].connected, n)]
}

# A three-node self-hosted shard in the customer's datacenter. Minting the
# token creates the shard; its nodes join with the token within two hours
# (jobbie shard --join-token "$(terraform output -raw dc1_join_token)" …).
resource "jobbie_shard_join_token" "dc1" {
  name       = "dc1"
  nodes      = 3
  expires_in = "2h"
}

# A namespace on that shard: created after the token, destroyed before the
# shard is revoked.
resource "jobbie_namespace" "onprem" {
  name  = "onprem"
  shard = jobbie_shard_join_token.dc1.shard_id
}

output "dc1_join_token" {
  value     = jobbie_shard_join_token.dc1.token
  sensitive = true
}

data "jobbie_role" "producer" {
  name = "producer"
}

output "producer_actions" {
  value = flatten(data.jobbie_role.producer.permissions[*].actions)
}

# Custom roles read the same way.
data "jobbie_role" "support" {
  name = "support"
}

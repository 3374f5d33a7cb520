data "jobbie_role" "producer" {
  name = "producer"
}

output "producer_actions" {
  value = flatten(data.jobbie_role.producer.permissions[*].actions)
}

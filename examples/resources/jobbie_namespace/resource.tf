resource "jobbie_namespace" "emails" {
  name                = "emails"
  description         = "Transactional and marketing mail"
  retention           = "168h"
  deletion_protection = true
}

# A scratch namespace that `terraform destroy` may empty.
resource "jobbie_namespace" "scratch" {
  name          = "scratch"
  force_destroy = true
}

# Queues and schedules name the namespace, so Terraform creates it first
# and deletes it last.
resource "jobbie_queue" "send" {
  namespace = jobbie_namespace.emails.name
  name      = "emails.send"
}

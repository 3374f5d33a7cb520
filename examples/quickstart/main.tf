# A first Terraform configuration for Jobbie, to apply against `make dev`.
# See "Manage Jobbie with Terraform" in the README: build the provider with
# `make terraform-provider`, point TF_CLI_CONFIG_FILE at the file it
# writes, set JOBBIE_API_KEY, then `terraform apply` here (no init).

terraform {
  required_providers {
    jobbie = {
      source = "jobbie/jobbie"
    }
  }
}

# endpoint defaults to JOBBIE_URL, else http://127.0.0.1:8080 (make dev);
# api_key to JOBBIE_API_KEY.
provider "jobbie" {
  namespace = "default"
}

# Every morning at 9, Paris time, one job on emails.digest.
resource "jobbie_schedule" "digest" {
  name     = "morning digest"
  queue    = "emails.digest"
  cron     = "0 9 * * *"
  timezone = "Europe/Paris"
  payload  = jsonencode({ template = "digest", audience = "subscribers" })
}

# A key for the service that enqueues: it may enqueue and read jobs, no more.
resource "jobbie_api_key" "producer" {
  name       = "quickstart producer"
  role       = "producer"
  namespaces = ["default"]
}

data "jobbie_role" "producer" {
  name = "producer"
}

output "digest_next_run" {
  value = jobbie_schedule.digest.next_run
}

output "producer_key_id" {
  value = jobbie_api_key.producer.id
}

output "producer_key" {
  value     = jobbie_api_key.producer.key
  sensitive = true
}

output "producer_may" {
  value = flatten(data.jobbie_role.producer.permissions[*].actions)
}

# A first Terraform configuration for Jobbie, to apply against `make dev`.
# See docs/terraform.md: build the provider with
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
provider "jobbie" {}

# A namespace of its own, emptied and deleted by `terraform destroy`.
resource "jobbie_namespace" "demo" {
  name          = "quickstart"
  description   = "Made by examples/quickstart"
  retention     = "72h"
  force_destroy = true
}

# A queue, configured as a whole: at most 5 jobs at once, 100 fetches a
# minute, and defaults for the jobs its producers enqueue. Like the
# namespace, a demo: destroy deletes it with the jobs it holds.
resource "jobbie_queue" "digest" {
  namespace     = jobbie_namespace.demo.name
  name          = "emails.digest"
  description   = "The morning digest, one job per run"
  force_destroy = true
  concurrency   = 5
  throttle      = { rate = 100, period = "1m" }
  defaults = {
    max_retries    = 5
    retry_backoff  = "exponential"
    lease_duration = "2m"
  }
}

# Every morning at 9, Paris time, one job on that queue.
resource "jobbie_schedule" "digest" {
  namespace = jobbie_namespace.demo.name
  name      = "morning digest"
  queue     = jobbie_queue.digest.name
  cron      = "0 9 * * *"
  timezone  = "Europe/Paris"
  payload   = jsonencode({ template = "digest", audience = "subscribers" })
}

data "jobbie_queues" "all" {
  namespace  = jobbie_namespace.demo.name
  depends_on = [jobbie_queue.digest]
}

# A role of our own: enqueue and read the jobs of the emails.* queues of
# the namespace, see its queues, nothing more.
resource "jobbie_role" "mailer" {
  name        = "quickstart-mailer"
  description = "Enqueues mail"
  permissions = [
    {
      actions    = ["job.enqueue", "job.read"]
      namespaces = [jobbie_namespace.demo.name]
      queues     = ["emails.*"]
    },
    {
      actions    = ["queue.read"]
      namespaces = [jobbie_namespace.demo.name]
      queues     = ["*"]
    },
  ]
}

# A key for the service that enqueues, with that role.
resource "jobbie_api_key" "producer" {
  name       = "quickstart producer"
  role       = jobbie_role.mailer.name
  namespaces = [jobbie_namespace.demo.name]
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

output "queues" {
  value = data.jobbie_queues.all.names
}

output "producer_may" {
  value = flatten(data.jobbie_role.producer.permissions[*].actions)
}

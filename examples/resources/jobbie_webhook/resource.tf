# Mail outcomes to one handler, signed with the namespace's keys and an
# endpoint secret of its own.
resource "jobbie_webhook" "mail_outcomes" {
  namespace   = "billing"
  url         = "https://hooks.example.com/jobbie"
  events      = ["job.completed", "job.dead"]
  queues      = ["emails.*"]
  description = "mail outcomes"
  with_secret = true
}

# The handler verifies with the secret (shown by the API only when it is
# made; kept in the state, marked sensitive) and the public keys.
output "mail_outcomes_secret" {
  value     = jobbie_webhook.mail_outcomes.secret
  sensitive = true
}

# Every event of every queue, stopped for now.
resource "jobbie_webhook" "audit" {
  namespace = "billing"
  url       = "https://audit.example.com/events"
  events    = ["*"]
  enabled   = false
}

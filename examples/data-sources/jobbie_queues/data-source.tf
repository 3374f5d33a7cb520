data "jobbie_queues" "emails" {
  namespace = "emails"
}

# The queues that are paused right now.
output "paused" {
  value = [for q in data.jobbie_queues.emails.queues : q.name if q.paused]
}

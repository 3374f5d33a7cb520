data "jobbie_queue" "send" {
  namespace = "emails"
  name      = "emails.send"
}

output "emails_waiting" {
  value = data.jobbie_queue.send.counts.pending
}

# Why the handler stopped being called, if a 410 Gone disabled push.
output "emails_push_disabled" {
  value = try(data.jobbie_queue.send.push.disabled.reason, null)
}

data "jobbie_queue" "send" {
  namespace = "emails"
  name      = "emails.send"
}

output "emails_waiting" {
  value = data.jobbie_queue.send.counts.pending
}

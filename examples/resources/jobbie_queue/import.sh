# A queue is imported by <namespace>/<queue name>.
terraform import jobbie_queue.send emails/emails.send

# Mail support: may look at and manage the jobs of the emails.* queues in
# namespace emails, and see every queue's counts there; nothing else.
resource "jobbie_role" "support" {
  name        = "support"
  description = "Mail support"
  permissions = [
    {
      actions    = ["job.read", "job.manage"]
      namespaces = ["emails"]
      queues     = ["emails.*"]
    },
    {
      actions    = ["queue.read"]
      namespaces = ["emails"]
      queues     = ["*"]
    },
  ]
}

resource "jobbie_api_key" "support" {
  name       = "support desk"
  role       = jobbie_role.support.name
  namespaces = ["emails"]
}

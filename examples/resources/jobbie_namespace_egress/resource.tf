# The namespace's push queues and webhooks may call only these hosts.
resource "jobbie_namespace_egress" "billing" {
  namespace    = "billing"
  egress_allow = ["hooks.example.com", "*.example.net"]
}

data "jobbie_webhooks" "billing" {
  namespace = "billing"
}

# Endpoints whose deliveries stopped after failing for 3 days.
output "disabled_webhooks" {
  value = [for w in data.jobbie_webhooks.billing.webhooks : w.url if w.disabled_reason != null]
}

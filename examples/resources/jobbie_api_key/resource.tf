resource "jobbie_api_key" "ci" {
  name        = "ci"
  description = "GitHub Actions: enqueues the nightly exports"
  role        = "producer"
  namespaces  = ["emails"]
  expires_at  = "2027-01-01T00:00:00Z"

  # Change rotation to give the key a new secret in place (same id); the
  # old secret keeps working for an hour, time to roll the new one out.
  rotation              = "2026-11"
  rotation_grace_period = "1h"
}

# The secret is in the state only; hand it on as a sensitive value.
output "ci_key" {
  value     = jobbie_api_key.ci.key
  sensitive = true
}

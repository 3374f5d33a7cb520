resource "jobbie_api_key" "ci" {
  name       = "ci"
  role       = "producer"
  namespaces = ["emails"]
  expires_at = "2027-01-01T00:00:00Z"
}

# The secret is in the state only; hand it on as a sensitive value.
output "ci_key" {
  value     = jobbie_api_key.ci.key
  sensitive = true
}

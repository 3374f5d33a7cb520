data "jobbie_signing_keys" "billing" {
  namespace = "billing"
}

# Every key signing now: during a rotation's overlap, both the old and the
# new key; a handler that trusts all of them verifies every request.
output "webhook_public_keys" {
  value = join(",", data.jobbie_signing_keys.billing.public_keys)
}

# The tenant's key, made outside Terraform (openssl rand -base64 32) and
# passed in as an ephemeral variable: it is in neither the plan nor the
# state. A new value rotates the key.
variable "payments_tenant_key" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "jobbie_namespace_encryption" "payments" {
  namespace      = "payments"
  enabled        = true
  search_decrypt = false
  tenant_key_wo  = var.payments_tenant_key
  # revoked = true  # makes everything sealed under the key unreadable, for good (without tenant_key_wo)
}

# A namespace's encryption is imported by the namespace's name; the key is
# not (no answer holds it): give tenant_key_wo the key tenant_key_id names.
terraform import jobbie_namespace_encryption.payments payments

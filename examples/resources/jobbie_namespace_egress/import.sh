# An egress allow-list is imported by its namespace's name.
terraform import jobbie_namespace_egress.billing billing

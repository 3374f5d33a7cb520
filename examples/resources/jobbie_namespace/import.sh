# A namespace is imported by its name (force_destroy is then false).
terraform import jobbie_namespace.emails emails

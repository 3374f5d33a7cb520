# A namespace's OTLP endpoint is imported by the namespace's name.
terraform import jobbie_tracing.billing billing

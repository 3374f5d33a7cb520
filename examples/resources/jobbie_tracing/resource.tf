# The spans of the namespace's jobs go to this OpenTelemetry collector.
resource "jobbie_tracing" "billing" {
  namespace     = "billing"
  otlp_endpoint = "https://otel.example.com/v1/traces"
}

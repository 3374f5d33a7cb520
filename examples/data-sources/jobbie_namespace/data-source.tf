data "jobbie_namespace" "emails" {
  name = "emails"
}

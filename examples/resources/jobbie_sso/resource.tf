# People of example.com sign in to the console through the tenant's
# identity provider: platform's members as admins, everyone else as viewers.
resource "jobbie_sso" "this" {
  issuer_url      = "https://login.example.com"
  client_id       = "jobbie-console"
  client_secret   = var.sso_client_secret # write-only at the API: kept in state from here
  allowed_domains = ["example.com"]
  group_roles = [
    { group = "platform", role = "admin" },
  ]
  default_role = "viewer"
}

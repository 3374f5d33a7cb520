resource "jobbie_schedule" "nightly" {
  namespace = "emails"
  name      = "nightly"
  queue     = "emails.send"
  cron      = "0 3 * * *"
  timezone  = "Europe/Paris"
  payload   = jsonencode({ kind = "digest" })
  priority  = "high"
  enabled   = true
}

# Every 90 seconds, at most one unfinished job at a time.
resource "jobbie_schedule" "sync" {
  name       = "sync"
  queue      = "crm.sync"
  cron       = "@every 90s"
  unique_key = "crm-sync"
}

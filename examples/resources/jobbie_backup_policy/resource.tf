# Back the namespace up every night at 03:00 Paris time and keep the
# newest 14 scheduled backups.
resource "jobbie_backup_policy" "billing" {
  namespace = "billing"
  cron      = "0 3 * * *"
  timezone  = "Europe/Paris"
  retention = 14
}

# Declared but not running.
resource "jobbie_backup_policy" "staging" {
  namespace = "staging"
  cron      = "@weekly"
  retention = 4
  enabled   = false
}

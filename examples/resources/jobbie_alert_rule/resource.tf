# More than 1,000 mails waiting for five minutes.
resource "jobbie_alert_rule" "mail_backlog" {
  namespace = "billing"
  name      = "mail-backlog"
  kind      = "queue_depth_above"
  queue     = "emails"
  threshold = 1000
  for       = "5m"
}

# More than 20 % of a queue's jobs died over ten minutes, once 50 finished.
resource "jobbie_alert_rule" "mail_failing" {
  namespace = "billing"
  name      = "mail-failing"
  kind      = "failure_rate_above"
  queue     = "emails"
  threshold = 20
  for       = "10m"
  min_count = 50
}

# Any queue of the namespace with jobs pending and no worker for two minutes.
resource "jobbie_alert_rule" "no_worker" {
  namespace = "billing"
  name      = "no-worker"
  kind      = "no_worker"
  for       = "2m"
}

# The rules fire and resolve as webhook events.
resource "jobbie_webhook" "alerts" {
  namespace = "billing"
  url       = "https://hooks.example.com/alerts"
  events    = ["alert.firing", "alert.resolved"]
}

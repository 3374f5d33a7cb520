# An alert rule is imported by <namespace>/<name>.
terraform import jobbie_alert_rule.mail_backlog billing/mail-backlog

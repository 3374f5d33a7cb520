# A backup policy is imported by its namespace's name.
terraform import jobbie_backup_policy.billing billing

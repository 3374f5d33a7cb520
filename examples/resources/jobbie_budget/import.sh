# A budget is imported by <namespace>/<name>.
terraform import jobbie_budget.summaries billing/summaries-daily

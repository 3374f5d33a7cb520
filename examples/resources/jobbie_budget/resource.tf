# At most $25 of model calls a day on the summaries queue: later jobs wait
# for approval.
resource "jobbie_budget" "summaries" {
  namespace      = "billing"
  name           = "summaries-daily"
  scope          = "queue"
  queue          = "summaries"
  daily_cost_usd = "25"
  on_exceed      = "hold"
}

# A team's jobs stop being accepted past two million tokens a day.
resource "jobbie_budget" "search_team" {
  namespace    = "billing"
  name         = "search-team"
  scope        = "tag"
  tag          = "team=search"
  daily_tokens = 2000000
  on_exceed    = "reject"
}

resource "jobbie_queue" "send" {
  namespace   = "emails"
  name        = "emails.send"
  description = "Transactional mail"
  concurrency = 5
  throttle = {
    rate   = 100
    period = "1m"
  }
  defaults = {
    max_retries    = 7
    retry_backoff  = "exponential"
    lease_duration = "2m"
    retention      = "168h"
  }
}

# One payment at a time.
resource "jobbie_queue" "charge" {
  namespace   = "billing"
  name        = "billing.charge"
  concurrency = 1
}

# At most two active jobs per customer (jobs enqueued with concurrency_key
# set to the customer's id); jobs without a key are not capped by it.
resource "jobbie_queue" "exports" {
  namespace       = "billing"
  name            = "billing.export"
  concurrency     = 50
  key_concurrency = { max = 2 }
}

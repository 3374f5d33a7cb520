resource "jobbie_queue" "send" {
  namespace   = "emails"
  name        = "emails.send"
  description = "Transactional mail"
  paused      = false
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

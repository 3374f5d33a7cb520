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

# A typed queue: every payload enqueued to it must satisfy the JSON Schema,
# or the enqueue is a 400 naming the JSON pointer at fault. Written in any
# layout (jsonencode, a heredoc, file("payment.schema.json")): the server's
# canonical form (keys sorted) is no change. Remove it to take any payload.
resource "jobbie_queue" "payments" {
  namespace = "billing"
  name      = "billing.payments"
  schema = jsonencode({
    type     = "object"
    required = ["order_id", "amount"]
    properties = {
      order_id = { type = "string" }
      amount   = { type = "integer", minimum = 0 }
    }
  })
}

# A push queue: Jobbie POSTs each job, signed, to the handler, which
# verifies the request with the namespace's public keys (data source
# jobbie_signing_keys). Remove the push block to make it a pull queue.
resource "jobbie_queue" "receipts" {
  namespace   = "billing"
  name        = "billing.receipts"
  concurrency = 20
  push = {
    url           = "https://hooks.example.com/jobs/receipts"
    mode          = "when_no_workers" # pull workers when they are connected, the handler otherwise
    timeout       = "45s"
    max_in_flight = 20
    headers       = { Authorization = "Bearer ${var.receipts_hook_token}" }
  }
}

variable "receipts_hook_token" {
  type      = string
  sensitive = true
}

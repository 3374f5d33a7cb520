package billing

import "github.com/jobbie/jobbie/wire"

// meters are what plans price and invoices bill, by their JSON names in
// wire.UsageMeters, in the order invoices list them. base is how many of
// the ledger's exact integer unit make one of the meter's unit: active
// job seconds are stored in milliseconds, storage byte-hours in
// byte-milliseconds; prices and included amounts are in the meter's unit.
var meters = []struct {
	name     string
	base     int64
	baseUnit string
	tenant   bool // counted per tenant (api requests), not per namespace
}{
	{name: "jobs_enqueued", base: 1, baseUnit: "jobs"},
	{name: "executions", base: 1, baseUnit: "executions"},
	{name: "jobs_completed", base: 1, baseUnit: "jobs"},
	{name: "jobs_failed", base: 1, baseUnit: "attempts"},
	{name: "jobs_dead", base: 1, baseUnit: "jobs"},
	{name: "active_job_seconds", base: 1000, baseUnit: "ms"},
	{name: "storage_byte_hours", base: 3_600_000, baseUnit: "byte_ms"},
	{name: "push_deliveries", base: 1, baseUnit: "deliveries"},
	{name: "webhook_deliveries", base: 1, baseUnit: "attempts"},
	{name: "ai_input_tokens", base: 1, baseUnit: "tokens"},
	{name: "ai_output_tokens", base: 1, baseUnit: "tokens"},
	{name: "ai_cache_read_tokens", base: 1, baseUnit: "tokens"},
	{name: "ai_cache_write_tokens", base: 1, baseUnit: "tokens"},
	{name: "ai_cost_usd", base: wire.AICostScale, baseUnit: "nano_usd"},
	{name: "api_requests", base: 1, baseUnit: "requests", tenant: true},
}

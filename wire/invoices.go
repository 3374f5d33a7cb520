package wire

import (
	"encoding/json"
	"time"
)

// Invoices. Control generates a tenant's invoice of a UTC month from the
// usage ledger and the tenant's plan history alone, so generating it again
// gives the same bytes; once the month is closed on every shard (and the
// gateways' api request counts have settled) control freezes it and serves
// the stored bytes from then on.
//
// Amounts are integers in minor units of Currency. Quantities are exact
// integers in the meter's base unit (QuantityUnit: milliseconds for
// active_job_seconds, byte-milliseconds for storage_byte_hours, a count
// for the others); they may exceed 2^53, so they are JSON numbers of any
// size (decode them as json.Number or a big integer, not a float).

// Invoice statuses.
const (
	InvoiceOpen   = "open"   // the period is running, or not yet closed on every shard
	InvoiceClosed = "closed" // frozen: it never changes again
)

// InvoicePeriod is the invoiced month: [Start, End), UTC.
type InvoicePeriod struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// InvoicePlan is a stretch of the period on one version of one plan
// (a plan change, or an edit of the plan, starts another).
type InvoicePlan struct {
	Name     string    `json:"name"`
	Version  uint64    `json:"version"`
	Currency string    `json:"currency"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
}

// InvoiceLine is one meter of one namespace (none for api_requests, which
// are counted per tenant) in one plan stretch. Billable is Quantity less
// IncludedApplied; BilledUnits is Billable in whole Units, rounded up;
// Amount is BilledUnits × UnitPrice. A meter the plan does not price has
// Unit, UnitPrice, BilledUnits and Amount 0.
type InvoiceLine struct {
	Meter           string      `json:"meter"`
	Namespace       string      `json:"namespace,omitempty"`
	Plan            string      `json:"plan"`
	PlanVersion     uint64      `json:"plan_version"`
	From            time.Time   `json:"from"`
	To              time.Time   `json:"to"`
	Quantity        json.Number `json:"quantity"`
	QuantityUnit    string      `json:"quantity_unit"`
	IncludedApplied json.Number `json:"included_applied"`
	Billable        json.Number `json:"billable"`
	Unit            int64       `json:"unit"` // in the meter's unit (seconds, byte-hours, a count), as the plan prices it
	UnitPrice       int64       `json:"unit_price"`
	BilledUnits     json.Number `json:"billed_units"`
	Amount          int64       `json:"amount"`
}

// InvoiceSource says what an invoice was generated from: the ledger's
// hours in the period that hold usage, how many ledger entries (a shard's
// meters of a namespace in an hour, or a gateway's api request count of
// an hour), and how far every shard holding the tenant was closed
// (capped at the period's end).
type InvoiceSource struct {
	LedgerHours   int       `json:"ledger_hours"`
	LedgerEntries int       `json:"ledger_entries"`
	ClosedThrough time.Time `json:"closed_through"`
	PlanChanges   int       `json:"plan_changes"` // stretches after the first
}

// Invoice is GET /api/v1/invoices/{id} and /api/v1/invoices/upcoming.
// Lines are ordered by plan stretch, then meter (as UsageMeters lists
// them), then namespace name.
type Invoice struct {
	ID            string        `json:"id"` // "inv_<tenant id>_<YYYY-MM>"
	TenantID      string        `json:"tenant_id"`
	Period        InvoicePeriod `json:"period"`
	Currency      string        `json:"currency"`
	Status        string        `json:"status"`
	Plans         []InvoicePlan `json:"plans"`
	Lines         []InvoiceLine `json:"lines"`
	Subtotal      int64         `json:"subtotal"`
	Total         int64         `json:"total"`
	GeneratedFrom InvoiceSource `json:"generated_from"`
}

// InvoiceSummary is one invoice in GET /api/v1/invoices.
type InvoiceSummary struct {
	ID       string        `json:"id"`
	Period   InvoicePeriod `json:"period"`
	Status   string        `json:"status"`
	Total    int64         `json:"total"`
	Currency string        `json:"currency"`
}

// InvoiceList is GET /api/v1/invoices: every month of the tenant, the
// newest (the running month) first.
type InvoiceList struct {
	Invoices []InvoiceSummary `json:"invoices"`
}

// InvoiceCSVHeader is the header row of GET /api/v1/invoices/{id}/csv;
// each further row is one line of the invoice.
var InvoiceCSVHeader = []string{
	"invoice_id", "period_start", "currency", "plan", "plan_version", "from", "to", "meter", "namespace",
	"quantity", "quantity_unit", "included_applied", "billable", "unit", "unit_price", "billed_units", "amount",
}

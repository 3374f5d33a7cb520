// Package billing is the control plane's pricing, as pure functions of
// the ledger and the plan history: plan validation (ValidatePlan), the
// plan version in effect in an hour (Book, VersionAt), invoice generation
// (GenerateInvoice), the meters invoices bill, and the aggregation of a
// usage answer (Usage). Callers read the rows (state.Ledger,
// state.UsageLedger) and pass them in: nothing here reads storage, a
// clock or a map's order, so the same rows give the same bytes.
package billing

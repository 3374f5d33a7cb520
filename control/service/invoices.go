package service

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/billing"
	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Invoices: generated on request from the ledger and the plan history
// (invoice_gen.go) while their month is open; frozen by the leader once
// the month is closed everywhere, and served as stored from then on.

// Invoice is tenant tid's invoice id as JSON: 404 for an id that is not
// one of the tenant's months (another tenant's included).
func (s *Service) Invoice(ctx context.Context, tid, id string) ([]byte, error) {
	now := s.cfg.Clock.Now()
	return ViewValue(s, func(r pebble.Reader) ([]byte, error) {
		t, err := state.FindTenant(r, tid)
		if err != nil {
			return nil, err
		}
		m, ok := billing.ParseInvoiceID(tid, id)
		if !ok || m.Before(billing.InvoiceMonth(t.CreatedAt)) || m.After(billing.InvoiceMonth(now)) {
			return nil, apierr.New(apierr.NotFound, "invoice %q not found", id)
		}
		return state.InvoiceJSON(r, tid, m)
	})
}

// UpcomingInvoice is tenant tid's invoice of the running month so far.
func (s *Service) UpcomingInvoice(ctx context.Context, tid string) ([]byte, error) {
	now := s.cfg.Clock.Now()
	return ViewValue(s, func(r pebble.Reader) ([]byte, error) {
		if _, err := state.FindTenant(r, tid); err != nil {
			return nil, err
		}
		return state.InvoiceJSON(r, tid, billing.InvoiceMonth(now))
	})
}

// Invoices lists every month of tenant tid since its creation, the
// running one first.
func (s *Service) Invoices(ctx context.Context, tid string) (wire.InvoiceList, error) {
	now := s.cfg.Clock.Now()
	return ViewValue(s, func(r pebble.Reader) (wire.InvoiceList, error) {
		t, err := state.FindTenant(r, tid)
		if err != nil {
			return wire.InvoiceList{}, err
		}
		out := wire.InvoiceList{Invoices: []wire.InvoiceSummary{}}
		first := billing.InvoiceMonth(t.CreatedAt)
		for m := billing.InvoiceMonth(now); !m.Before(first); m = m.AddDate(0, -1, 0) {
			inv, err := state.LoadInvoice(r, tid, m)
			if err != nil {
				return wire.InvoiceList{}, err
			}
			out.Invoices = append(out.Invoices, wire.InvoiceSummary{ID: inv.ID, Period: inv.Period, Status: inv.Status, Total: inv.Total, Currency: inv.Currency})
		}
		return out, nil
	})
}

// FreezeInvoices freezes every ended month whose invoice can no longer
// change: every shard holding the tenant has closed it (its cursor is at
// or past the month's end) and the gateways' api request counts have
// settled. It runs on the leader after each usage pull; months of a
// tenant are frozen in order, so it stops at a tenant's first open one.
func (s *Service) FreezeInvoices(ctx context.Context) {
	now := s.cfg.Clock.Now()
	cmds, err := ViewValue(s, func(r pebble.Reader) ([]state.FreezeInvoiceCmd, error) { return state.InvoicesToFreeze(r, now) })
	if err != nil {
		s.log.Warn("control: freeze invoices", "err", err)
		return
	}
	for _, c := range cmds {
		if _, err := propose(ctx, s, state.OpFreezeInvoice, &c); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("control: freeze invoice", "tenant", c.TenantID, "month", state.MonthKey(c.Month), "err", err)
			}
			return
		}
	}
}

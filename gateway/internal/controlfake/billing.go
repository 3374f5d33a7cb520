package controlfake

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Billing is the fake control's plans, quotas, invoices and usage, per
// tenant, and the api request counts gateways push.
type Billing struct {
	Plans    map[string]wire.TenantPlan
	Invoices map[string]map[string][]byte // tenant → invoice id ("upcoming" too) → control's bytes
	Quotas   map[string]wire.TenantQuota
	Usage    map[string]wire.Usage
	// PlansDown fails every plan fetch with 503.
	PlansDown bool
	// PlanGate, when set, holds plan answers until it is closed.
	PlanGate chan struct{}

	QuotaAsks  []string     // the tenant of every quota call
	UsageAsks  []UsageAsked // every usage call
	Pushes     []wire.APIRequestsReport
	QuotaAsked chan struct{} // a value per quota answered, while there is room
	Pushed     chan struct{} // a value per push, while there is room
}

// UsageAsked is one usage call control saw.
type UsageAsked struct {
	Tenant string
	Query  wire.UsageQuery
}

func newBilling() Billing {
	return Billing{Plans: map[string]wire.TenantPlan{}, Invoices: map[string]map[string][]byte{}, Quotas: map[string]wire.TenantQuota{},
		Usage: map[string]wire.Usage{}, QuotaAsked: make(chan struct{}, 64), Pushed: make(chan struct{}, 64)}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (fc *Control) TenantPlan(_ context.Context, _, tid string) (wire.TenantPlan, error) {
	tid = strings.Clone(tid)
	fc.PlanFetches.Add(1)
	fc.Lock()
	gate := fc.Billing.PlanGate
	fc.Unlock()
	if gate != nil {
		<-gate
	}
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.TenantPlan{}, err
	}
	tp, ok := fc.Billing.Plans[tid]
	switch {
	case fc.Billing.PlansDown:
		return wire.TenantPlan{}, unavailable(apierr.Unavailable, "down", "")
	case !ok:
		return wire.TenantPlan{}, refuse(apierr.New(apierr.NotFound, "tenant has no plan"))
	}
	return clone(tp), nil
}

// SetPlan puts tenant tid on tp, as control would answer it.
func (fc *Control) SetPlan(tid string, tp wire.TenantPlan) {
	fc.Lock()
	defer fc.Unlock()
	tp.TenantID = tid
	fc.Billing.Plans[tid] = tp
}

func (fc *Control) TenantQuota(_ context.Context, tid string) (wire.TenantQuota, error) {
	tid = strings.Clone(tid)
	defer signal(fc.Billing.QuotaAsked)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.TenantQuota{}, err
	}
	fc.Billing.QuotaAsks = append(fc.Billing.QuotaAsks, tid)
	q, ok := fc.Billing.Quotas[tid]
	if !ok {
		return wire.TenantQuota{}, refuse(apierr.New(apierr.NotFound, "tenant not found"))
	}
	return clone(q), nil
}

// SetQuota is what control says of q.TenantID's quota.
func (fc *Control) SetQuota(q wire.TenantQuota) {
	fc.Lock()
	defer fc.Unlock()
	fc.Billing.Quotas[q.TenantID] = q
}

// QuotaAskCount is how many quota calls control answered.
func (fc *Control) QuotaAskCount() int {
	fc.Lock()
	defer fc.Unlock()
	return len(fc.Billing.QuotaAsks)
}

func (fc *Control) Invoices(_ context.Context, _, tid string) (wire.InvoiceList, error) {
	tid = strings.Clone(tid)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.InvoiceList{}, err
	}
	list := wire.InvoiceList{Invoices: []wire.InvoiceSummary{}}
	for id, b := range fc.Billing.Invoices[tid] {
		if id == "upcoming" {
			continue
		}
		var inv wire.Invoice
		_ = json.Unmarshal(b, &inv)
		list.Invoices = append(list.Invoices, wire.InvoiceSummary{ID: inv.ID, Period: inv.Period, Status: inv.Status, Total: inv.Total, Currency: inv.Currency})
	}
	sort.Slice(list.Invoices, func(i, j int) bool { return list.Invoices[i].ID > list.Invoices[j].ID })
	return clone(list), nil
}

func (fc *Control) Invoice(_ context.Context, _, tid, id string) (json.RawMessage, error) {
	tid, id = strings.Clone(tid), strings.Clone(id)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return nil, err
	}
	b, ok := fc.Billing.Invoices[tid][id]
	if !ok {
		return nil, refuse(apierr.New(apierr.NotFound, "invoice %q not found", id))
	}
	return slices.Clone(b), nil
}

// SetInvoice stores inv as tenant tid's invoice id and returns its bytes.
func (fc *Control) SetInvoice(tid, id string, inv wire.Invoice) []byte {
	b, err := json.Marshal(inv)
	if err != nil {
		panic(err)
	}
	fc.Lock()
	defer fc.Unlock()
	if fc.Billing.Invoices[tid] == nil {
		fc.Billing.Invoices[tid] = map[string][]byte{}
	}
	fc.Billing.Invoices[tid][id] = b
	return b
}

// Usage answers a tenant's canned usage; asked about a namespace, as
// control does: that one alone, without api requests.
func (fc *Control) Usage(_ context.Context, _, tid string, q wire.UsageQuery) (wire.Usage, error) {
	tid, q.Namespace = strings.Clone(tid), strings.Clone(q.Namespace)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return wire.Usage{}, err
	}
	fc.Billing.UsageAsks = append(fc.Billing.UsageAsks, UsageAsked{Tenant: tid, Query: q})
	u, ok := fc.Billing.Usage[tid]
	if !ok {
		return wire.Usage{}, refuse(apierr.New(apierr.NotFound, "tenant not found"))
	}
	if q.Namespace != "" {
		u.Namespaces = slices.DeleteFunc(slices.Clone(u.Namespaces), func(nm wire.NamespaceMeters) bool { return nm.Namespace != q.Namespace })
		u.Totals.APIRequests = 0
	}
	return clone(u), nil
}

// SetUsage is tenant tid's usage, as control answers it.
func (fc *Control) SetUsage(tid string, u wire.Usage) {
	fc.Lock()
	defer fc.Unlock()
	fc.Billing.Usage[tid] = u
}

// UsageAsked is every usage call control saw.
func (fc *Control) UsageAsked() []UsageAsked {
	fc.Lock()
	defer fc.Unlock()
	return slices.Clone(fc.Billing.UsageAsks)
}

func (fc *Control) ReportAPIRequests(_ context.Context, in wire.APIRequestsReport) error {
	defer signal(fc.Billing.Pushed)
	defer fc.Unlock()
	if err := fc.enter(); err != nil {
		return err
	}
	fc.Billing.Pushes = append(fc.Billing.Pushes, clone(in))
	return nil
}

// PushList is every api request report pushed, in order.
func (fc *Control) PushList() []wire.APIRequestsReport {
	fc.Lock()
	defer fc.Unlock()
	return slices.Clone(fc.Billing.Pushes)
}

// SetPlansDown makes every plan fetch fail (or answer again).
func (fc *Control) SetPlansDown(down bool) {
	fc.Lock()
	defer fc.Unlock()
	fc.Billing.PlansDown = down
}

// SetPlanGate holds plan answers until gate is closed (nil: none held).
func (fc *Control) SetPlanGate(gate chan struct{}) {
	fc.Lock()
	defer fc.Unlock()
	fc.Billing.PlanGate = gate
}

package admin

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"regexp"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/gateway/admission"
	"github.com/jobbie/jobbie/gateway/admitted"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/wire"
)

// Billing: a tenant's plan and invoices (GET /api/v1/plan, /invoices,
// /invoices/upcoming, /invoices/{id}, /invoices/{id}/csv), served from
// control, which generates invoices and keeps closed ones. They need
// usage.read (the billing role's one action) over the whole tenant: an
// invoice covers every namespace, so a key narrowed to some namespaces
// is refused rather than shown a partial bill. Invoice JSON is passed on
// as control sent it, so a closed invoice's bytes are the stored ones.

// wholeTenant refuses a key that may not read usage in every namespace.
func wholeTenant(r *admitted.Request) error {
	if !admission.ReadsAllUsage(r) {
		return apierr.New(apierr.Forbidden, "API key %s may read usage in some namespaces only; plans and invoices cover the whole tenant", r.Key.Subject)
	}
	return nil
}

func (a *Admin) Plan(c *fiber.Ctx, r *admitted.Request) error {
	if err := wholeTenant(r); err != nil {
		return err
	}
	tp, err := a.control.TenantPlan(a.ctx, r.RequestID, r.Key.TenantID)
	if err != nil {
		return a.tell(r, err)
	}
	return c.JSON(tp)
}

func (a *Admin) Invoices(c *fiber.Ctx, r *admitted.Request) error {
	if err := wholeTenant(r); err != nil {
		return err
	}
	list, err := a.control.Invoices(a.ctx, r.RequestID, r.Key.TenantID)
	if err != nil {
		return a.tell(r, err)
	}
	return c.JSON(list)
}

func (a *Admin) UpcomingInvoice(c *fiber.Ctx, r *admitted.Request) error {
	return a.sendInvoice(c, r, "upcoming")
}

func (a *Admin) Invoice(c *fiber.Ctx, r *admitted.Request) error {
	return a.sendInvoice(c, r, c.Params("id"))
}

// sendInvoice answers invoice id ("upcoming" or an invoice id) as
// control's JSON.
func (a *Admin) sendInvoice(c *fiber.Ctx, r *admitted.Request, id string) error {
	body, err := a.invoiceBytes(r, id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(body)
}

// InvoiceCSV answers invoice id as CSV: wire.InvoiceCSVHeader, then a
// row per line.
func (a *Admin) InvoiceCSV(c *fiber.Ctx, r *admitted.Request) error {
	id := c.Params("id")
	body, err := a.invoiceBytes(r, id)
	if err != nil {
		return err
	}
	var inv wire.Invoice
	if err := json.Unmarshal(body, &inv); err != nil {
		a.log.Error("gateway: undecodable invoice from control", "id", id, "request_id", r.RequestID, "err", err)
		return apierr.New(apierr.Internal, "the control plane gave an invoice the gateway cannot read")
	}
	out, err := invoiceCSVBytes(inv)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+inv.ID+`.csv"`)
	return c.Send(out)
}

// invoiceIDRE is the shape of an invoice id ("inv_<tenant id>_<YYYY-MM>")
// and of "upcoming"; anything else is refused before control is asked.
var invoiceIDRE = regexp.MustCompile(`^(inv_[a-z0-9_]{1,64}_[0-9]{4}-[0-9]{2}|upcoming)$`)

func (a *Admin) invoiceBytes(r *admitted.Request, id string) ([]byte, error) {
	if err := wholeTenant(r); err != nil {
		return nil, err
	}
	if !invoiceIDRE.MatchString(id) {
		return nil, apierr.Field("id", "invoice id %q is not of the form inv_<tenant id>_<YYYY-MM>", id)
	}
	body, err := a.control.Invoice(a.ctx, r.RequestID, r.Key.TenantID, id)
	return body, a.tell(r, err)
}

func invoiceCSVBytes(inv wire.Invoice) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	rows := [][]string{wire.InvoiceCSVHeader}
	for _, l := range inv.Lines {
		rows = append(rows, []string{
			inv.ID, inv.Period.Start.UTC().Format(time.RFC3339), inv.Currency, l.Plan, strconv.FormatUint(l.PlanVersion, 10),
			l.From.UTC().Format(time.RFC3339), l.To.UTC().Format(time.RFC3339), l.Meter, l.Namespace,
			l.Quantity.String(), l.QuantityUnit, l.IncludedApplied.String(), l.Billable.String(),
			strconv.FormatInt(l.Unit, 10), strconv.FormatInt(l.UnitPrice, 10), l.BilledUnits.String(), strconv.FormatInt(l.Amount, 10),
		})
	}
	if err := w.WriteAll(rows); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

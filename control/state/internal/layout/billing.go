package layout

import (
	"fmt"
	"strconv"
	"time"
)

// Plans, the plan history of tenants and frozen invoices.

// PlanVersion is the key of version v of plan name. Versions are written
// as 20 decimal digits so a plan's versions sort in order.
func PlanVersion(name string, v uint64) []byte {
	return key(prefixPlan, name, fmt.Sprintf("%020d", v))
}

// PlanVersions is the prefix of every version of plan name.
func PlanVersions(name string) []byte { return within(prefixPlan, name) }

// Plans is the prefix of every version of every plan, sorted by plan name
// then version.
func Plans() []byte { return []byte{prefixPlan} }

// PlanVersionParts decodes a PlanVersion key.
func PlanVersionParts(k []byte) (name string, v uint64, ok bool) {
	if len(k) < 2 || k[0] != prefixPlan {
		return "", 0, false
	}
	for i := len(k) - 1; i > 0; i-- {
		if k[i] == sep {
			n, err := strconv.ParseUint(string(k[i+1:]), 10, 64)
			return string(k[1:i]), n, err == nil
		}
	}
	return "", 0, false
}

// TenantPlan is the key of tenant tid's plan from the hour starting at
// hour on: a tenant's history sorts by hour.
func TenantPlan(tid string, hour time.Time) []byte { return key(prefixTenantPlan, tid, Hour(hour)) }

// TenantPlans is the prefix of tenant tid's plan history.
func TenantPlans(tid string) []byte { return within(prefixTenantPlan, tid) }

// TenantPlanHour decodes the hour of a TenantPlan key.
func TenantPlanHour(k []byte) (time.Time, error) { return ParseHour(last(k)) }

// Month is how a month is written inside a key: "2006-01", UTC.
func Month(t time.Time) string { return t.UTC().Format("2006-01") }

// Invoice is the key of tenant tid's frozen invoice of the month starting
// at month.
func Invoice(tid string, month time.Time) []byte { return key(prefixInvoice, tid, Month(month)) }

// Invoices is the prefix of tenant tid's frozen invoices, by month.
func Invoices(tid string) []byte { return within(prefixInvoice, tid) }

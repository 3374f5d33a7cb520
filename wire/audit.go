package wire

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The audit log (docs/api/audit.md): one record per administrative or
// job-management request of a tenant, kept where the action is applied
// (a namespace's shard, or control for tenant administration) and read
// through GET /api/v1/audit. A record never holds a secret: no token,
// no webhook secret, no payload; only who, what, on which object, and
// how it ended.

// AuditRecord is one audited request.
type AuditRecord struct {
	// ID is the record's place in its log ("n:" a namespace's shard's,
	// "t:" control's), unique in the tenant's audit log.
	ID      string    `json:"id"`
	Time    time.Time `json:"time"`
	KeyID   string    `json:"key_id"`
	KeyName string    `json:"key_name,omitempty"`
	Role    string    `json:"role"`
	// Action is the RBAC action the route requires (tenancy.Action).
	Action string `json:"action"`
	// Route is the route's method and path pattern, e.g.
	// "POST /api/v1/jobs/:id/retry".
	Route      string `json:"route"`
	ObjectType string `json:"object_type"`
	ObjectID   string `json:"object_id,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	// Result is "ok", or the error code of a refused or failed request.
	Result        string `json:"result"`
	Status        int    `json:"status"`
	SourceAddress string `json:"source_address"`
	RequestID     string `json:"request_id"`
}

// AuditPage is GET /api/v1/audit's answer: records oldest first, and a
// cursor for the next page when there may be more.
type AuditPage struct {
	Records []AuditRecord `json:"records"`
	Cursor  string        `json:"cursor,omitempty"`
}

// AuditHeader carries, on a request the gateway sends a shard, the audit
// context of an audited route as JSON (AuditContext): the shard records
// the request's outcome under it. Set by the gateway, never by a client;
// absent on routes that are not audited.
const AuditHeader = "X-Jobbie-Audit"

// AuditContext is what the gateway knows of an audited request before it
// is served: the record without its time, result and status.
type AuditContext struct {
	KeyID         string `json:"k"`
	Role          string `json:"r"`
	Action        string `json:"a"`
	Route         string `json:"p"`
	ObjectType    string `json:"t"`
	ObjectID      string `json:"o,omitempty"`
	SourceAddress string `json:"s"`
	RequestID     string `json:"q"`
	// RetentionDays is the plan's audit_retention_days (defaults filled
	// in): how long the namespace's shard keeps its records.
	RetentionDays int64 `json:"d"`
}

// Audit retention: a plan's bounds and default (PlanLimits).
const (
	DefaultAuditRetentionDays = 90
	MinAuditRetentionDays     = 1
	MaxAuditRetentionDays     = 3650
)

// AuditRetention is how many days of audit records l keeps, the default
// filled in.
func (l PlanLimits) AuditRetention() int64 {
	if l.AuditRetentionDays != nil {
		return *l.AuditRetentionDays
	}
	return DefaultAuditRetentionDays
}

// AuditObjectID is the id or name a created object's answer names (its
// "id", else its "name"), for a record whose path names none.
func AuditObjectID(answer []byte) string {
	var v struct {
		ID   json.RawMessage `json:"id"`
		Name string          `json:"name"`
	}
	if json.Unmarshal(answer, &v) != nil {
		return ""
	}
	var id string
	if json.Unmarshal(v.ID, &id) == nil && id != "" {
		return id
	}
	return v.Name
}

// Audit retention and page bounds.
const (
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// AuditFilter is GET /api/v1/audit's filters, each empty for any: the
// action, the key, the namespace, the object ("type" or "type/id"), the
// result ("ok", "error" for any refusal or failure, or an error code)
// and a time range [From, To).
type AuditFilter struct {
	Action    string
	KeyID     string
	Namespace string
	Object    string
	Result    string
	From, To  time.Time
}

// ParseAuditFilter reads the filters and the page size from a request's
// query (get returns a parameter, "" when absent); a bad one is an
// error naming the parameter (Field).
func ParseAuditFilter(get func(string) string) (f AuditFilter, limit int, field string, err error) {
	f = AuditFilter{Action: get("action"), KeyID: get("key_id"), Namespace: get("namespace"), Object: get("object"), Result: get("result")}
	for _, t := range []struct {
		name string
		to   *time.Time
	}{{"from", &f.From}, {"to", &f.To}} {
		if v := get(t.name); v != "" {
			if *t.to, err = time.Parse(time.RFC3339Nano, v); err != nil {
				return f, 0, t.name, fmt.Errorf("%s must be an RFC 3339 time, not %q", t.name, v)
			}
		}
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		return f, 0, "to", fmt.Errorf("to must be after from")
	}
	limit = DefaultAuditLimit
	if v := get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > MaxAuditLimit {
			return f, 0, "limit", fmt.Errorf("limit must be from 1 to %d, not %q", MaxAuditLimit, v)
		}
	}
	return f, limit, "", nil
}

// Query is f as query parameters (the inverse of ParseAuditFilter).
func (f AuditFilter) Query() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"action": f.Action, "key_id": f.KeyID, "namespace": f.Namespace, "object": f.Object, "result": f.Result} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !f.From.IsZero() {
		q.Set("from", f.From.Format(time.RFC3339Nano))
	}
	if !f.To.IsZero() {
		q.Set("to", f.To.Format(time.RFC3339Nano))
	}
	return q
}

// Match reports whether r passes f's filters but the time range, which
// a log's reader applies by its order.
func (f *AuditFilter) Match(r *AuditRecord) bool {
	switch {
	case f.Action != "" && r.Action != f.Action,
		f.KeyID != "" && r.KeyID != f.KeyID,
		f.Namespace != "" && r.Namespace != f.Namespace:
		return false
	}
	if f.Object != "" {
		typ, id, hasID := strings.Cut(f.Object, "/")
		if r.ObjectType != typ || hasID && r.ObjectID != id {
			return false
		}
	}
	switch f.Result {
	case "":
	case "error":
		return r.Result != "ok"
	default:
		return r.Result == f.Result
	}
	return true
}

// AuditResult is a record's result for an answer: "ok" below 400, else
// the error code of its body (ErrorBody), else "http_<status>".
func AuditResult(status int, body []byte) string {
	if status < 400 {
		return "ok"
	}
	var e ErrorBody
	if json.Unmarshal(body, &e) == nil && e.Error != nil && e.Error.Code != "" {
		return string(e.Error.Code)
	}
	return "http_" + strconv.Itoa(status)
}

// AuditAppendRequest is control's internal POST
// /internal/v1/tenants/{tid}/audit: one record of a tenant's request,
// and the days the tenant's plan keeps them (0: as recorded).
type AuditAppendRequest struct {
	Record        AuditRecord `json:"record"`
	RetentionDays int64       `json:"retention_days,omitempty"`
}

package service

import (
	"context"

	"github.com/cockroachdb/pebble"

	"github.com/jobbie/jobbie/control/state"
	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A tenant's audit log at control (state/audit.go): the gateway appends
// a record of each tenant administration request it served through
// control and of each request it refused itself; the gateway's
// GET /api/v1/audit reads it with the namespaces' own logs.

// auditScan bounds the records one read looks at.
const auditScan = 10_000

// AuditAppendRequest is POST /internal/v1/tenants/{tid}/audit.
type AuditAppendRequest = wire.AuditAppendRequest

// AppendAudit records one request of tenant tid.
func (s *Service) AppendAudit(ctx context.Context, tid string, in AuditAppendRequest) error {
	if tenancy.ValidateTenantID(tid) != nil {
		return apierr.New(apierr.NotFound, "tenant %q not found", tid)
	}
	if in.Record.Action == "" || in.Record.Route == "" {
		return apierr.Field("record", "an audit record names its action and route")
	}
	_, err := propose(ctx, s, state.OpAppendAudit, &state.AppendAuditCmd{TenantID: tid, Record: in.Record, RetentionDays: in.RetentionDays})
	return err
}

// Audit is a page of tenant tid's records that pass f, after the cursor
// after ("" from the start).
func (s *Service) Audit(ctx context.Context, tid string, f *wire.AuditFilter, after string, limit int) (*wire.AuditPage, error) {
	return ViewValue(s, func(r pebble.Reader) (*wire.AuditPage, error) {
		if _, err := state.FindTenant(r, tid); err != nil {
			return nil, err
		}
		return state.ReadAudit(r, tid, f, after, limit, auditScan)
	})
}

// TrimAudit deletes, on the leader, every tenant's records past its
// retention as of now.
func (s *Service) TrimAudit(ctx context.Context) error {
	trims, err := ViewValue(s, func(r pebble.Reader) ([]state.TrimAuditCmd, error) {
		return state.AuditTrims(r, s.cfg.Clock.Now()), nil
	})
	if err != nil {
		return err
	}
	for i := range trims {
		if _, err := propose(ctx, s, state.OpTrimAudit, &trims[i]); err != nil {
			return err
		}
	}
	return nil
}

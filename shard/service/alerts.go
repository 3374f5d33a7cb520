package service

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/jobbie/jobbie/internal/apierr"
	"github.com/jobbie/jobbie/shard/engine"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// A namespace's alert rules: validated here, stored by the engine
// (alerts.go), evaluated on the leader (alerts_eval.go).

// CreateAlert answers POST /api/v1/alerts.
func (s *Service) CreateAlert(ctx context.Context, ns string, r *wire.AlertRuleRequest) (*wire.AlertRule, error) {
	if err := CheckNamespace(ns); err != nil {
		return nil, err
	}
	if err := tenancy.ValidateAlertName(r.Name); err != nil {
		return nil, apierr.Field("name", "%v", err)
	}
	rule, err := toAlertRule(r)
	if err != nil {
		return nil, err
	}
	rule.Name = r.Name
	rec, err := engine.AlertCreate.Propose(ctx, s.node, &engine.AlertRuleCmd{NS: ns, Rule: *rule})
	if err != nil {
		return nil, err
	}
	return s.alertView(ns, rec), nil
}

// UpdateAlert answers PUT /api/v1/alerts/{name}: the whole rule.
func (s *Service) UpdateAlert(ctx context.Context, ns, name string, r *wire.AlertRuleRequest) (*wire.AlertRule, error) {
	if _, err := s.readAlert(ns, name); err != nil {
		return nil, err
	}
	if r.Name != "" && r.Name != name {
		return nil, apierr.Field("name", "name: a rule is not renamed; its name is the path's (%q)", name)
	}
	rule, err := toAlertRule(r)
	if err != nil {
		return nil, err
	}
	rule.Name = name
	rec, err := engine.AlertUpdate.Propose(ctx, s.node, &engine.AlertRuleCmd{NS: ns, Rule: *rule})
	if err != nil {
		return nil, err
	}
	return s.alertView(ns, rec), nil
}

// DeleteAlert answers DELETE /api/v1/alerts/{name}; a queue it fired on
// resolves.
func (s *Service) DeleteAlert(ctx context.Context, ns, name string) error {
	if _, err := s.readAlert(ns, name); err != nil {
		return err
	}
	_, err := engine.AlertDelete.Propose(ctx, s.node, &engine.AlertNameCmd{NS: ns, Name: name})
	return err
}

// Alert answers GET /api/v1/alerts/{name}.
func (s *Service) Alert(ns, name string) (*wire.AlertRule, error) {
	r, err := s.readAlert(ns, name)
	if err != nil {
		return nil, err
	}
	return s.alertView(ns, r), nil
}

// Alerts answers GET /api/v1/alerts.
func (s *Service) Alerts(ns string) (*wire.AlertRuleList, error) {
	if err := CheckNamespace(ns); err != nil {
		return nil, err
	}
	out := &wire.AlertRuleList{Alerts: []wire.AlertRule{}}
	for _, r := range engine.ReadAlertRules(s.node.DB(), ns) {
		out.Alerts = append(out.Alerts, *s.alertView(ns, r))
	}
	return out, nil
}

func (s *Service) readAlert(ns, name string) (*engine.AlertRuleRecord, error) {
	if err := CheckNamespace(ns); err != nil {
		return nil, err
	}
	if tenancy.ValidateAlertName(name) != nil {
		return nil, apierr.New(apierr.NotFound, "alert rule %q not found", name)
	}
	r, ok := engine.ReadAlertRule(s.node.DB(), ns, name)
	if !ok {
		return nil, apierr.New(apierr.NotFound, "alert rule %q not found", name)
	}
	return r, nil
}

// toAlertRule checks a rule's settings (400 naming the field) into the
// engine's record. What a kind does not use must be left out.
func toAlertRule(r *wire.AlertRuleRequest) (*engine.AlertRuleRecord, error) {
	if !slices.Contains(wire.AlertKinds, r.Kind) {
		return nil, apierr.Field("kind", "kind %q: one of %v", r.Kind, wire.AlertKinds)
	}
	if r.Queue != "" {
		if err := tenancy.ValidateQueue(r.Queue); err != nil {
			return nil, apierr.Field("queue", "%v", err)
		}
	}
	d, err := time.ParseDuration(r.For)
	if err != nil || d < 0 || d > wire.MaxAlertFor {
		return nil, apierr.Field("for", "for %q: a duration like \"5m\", from 0 to %s", r.For, wire.MaxAlertFor)
	}
	if d == 0 && r.Kind != wire.AlertQueueDepth {
		return nil, apierr.Field("for", "for: %s needs a duration above 0", r.Kind)
	}
	t := r.Threshold
	if math.IsNaN(t) || t < 0 || t > wire.MaxAlertThreshold {
		return nil, apierr.Field("threshold", "threshold: from 0 to %g", float64(wire.MaxAlertThreshold))
	}
	switch r.Kind {
	case wire.AlertQueueDepth:
		if t != math.Trunc(t) {
			return nil, apierr.Field("threshold", "threshold: %s counts jobs, a whole number", r.Kind)
		}
	case wire.AlertDead:
		if t < 1 || t != math.Trunc(t) {
			return nil, apierr.Field("threshold", "threshold: %s counts jobs, a whole number from 1", r.Kind)
		}
	case wire.AlertFailureRate:
		if t <= 0 || t > 100 {
			return nil, apierr.Field("threshold", "threshold: %s is a percentage above 0, at most 100", r.Kind)
		}
	default:
		if t != 0 {
			return nil, apierr.Field("threshold", "threshold: %s has none (its measure is for)", r.Kind)
		}
	}
	min := r.MinCount
	if r.Kind == wire.AlertFailureRate {
		if min == 0 {
			min = wire.DefaultAlertMinCount
		}
		if min < 1 || min > wire.MaxAlertMinCount {
			return nil, apierr.Field("min_count", "min_count: from 1 to %d", wire.MaxAlertMinCount)
		}
	} else if min != 0 {
		return nil, apierr.Field("min_count", "min_count: only %s has one", wire.AlertFailureRate)
	}
	return &engine.AlertRuleRecord{Kind: r.Kind, Queue: r.Queue, Threshold: t, ForNs: int64(d), MinCount: min,
		Enabled: r.Enabled == nil || *r.Enabled}, nil
}

// alertView is a rule as the API shows it, with the last values this
// node's evaluation saw (the leader's: the API reads rules there).
func (s *Service) alertView(ns string, r *engine.AlertRuleRecord) *wire.AlertRule {
	v := &wire.AlertRule{Name: r.Name, Kind: r.Kind, Queue: r.Queue, Threshold: r.Threshold,
		For: wire.FormatDuration(time.Duration(r.ForNs)), MinCount: r.MinCount, Enabled: r.Enabled, State: wire.AlertOK,
		Firing: []wire.AlertQueue{}, CreatedAt: time.Unix(0, r.CreatedAt).UTC(), UpdatedAt: time.Unix(0, r.UpdatedAt).UTC()}
	for _, f := range r.Firing {
		q := wire.AlertQueue{Queue: f.Queue, Since: time.Unix(0, f.Since).UTC(), Value: f.Value}
		v.Firing = append(v.Firing, q)
		if v.Since == nil || q.Since.Before(*v.Since) {
			v.Since = &q.Since
		}
	}
	v.Values, v.EvaluatedAt = s.alerts.values(ns, r.Name)
	if len(v.Firing) > 0 {
		v.State = wire.AlertFiring
	}
	return v
}

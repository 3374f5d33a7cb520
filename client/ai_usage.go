package client

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/jobbie/jobbie/wire"
)

// AIUsage is one report of what a job's model calls used: tokens by kind,
// cost_usd as a decimal string, model and provider (docs/api/ai.md).
type AIUsage = wire.AIUsage

// AIUsageResponse is GET /api/v1/ai/usage's answer.
type AIUsageResponse = wire.AIUsageResponse

// AIUsageBucket is one step's sums in an AIUsageResponse asked with a Step.
type AIUsageBucket = wire.AIUsageBucket

// WithUsage adds a usage report to an Ack or Fail; nil reports nothing.
func WithUsage(u *AIUsage) ReportOption {
	return func(r *report) { r.usage = u }
}

// ReportUsage adds u to what the job reports: the worker sends the sum of
// the reports made since its last with the job's next heartbeat, or with
// its ack or fail, whichever comes first (over HTTP or the gRPC stream). Sums are exact: cost_usd is added as a decimal, never a float.
// Bad values are refused here, as the server would refuse them. A pushed
// job cannot report usage.
//
// A heartbeat that fails keeps its usage for the next one; a heartbeat
// that timed out after the server applied it may count its usage twice.
func (j *JobContext) ReportUsage(u AIUsage) error {
	c, err := wire.CheckAIUsage("usage", &u)
	if err != nil {
		return fmt.Errorf("client: usage of job %s: %w", j.ID, err)
	}
	if j.w == nil {
		return fmt.Errorf("client: job %s was pushed: its answer carries no usage", j.ID)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.usage.add(c)
}

// aiPending is usage reported and not yet sent, summed exactly.
type aiPending struct {
	c   wire.AIUsageCounts
	set bool
}

var errUsageTooLarge = errors.New("the usage not yet sent would pass what one report may carry: let a heartbeat send it first")

func (p *aiPending) add(c wire.AIUsageCounts) error {
	s := p.c
	s.Input += c.Input
	s.Output += c.Output
	s.CacheRead += c.CacheRead
	s.CacheWrite += c.CacheWrite
	s.CostNanos += c.CostNanos
	if max(s.Input, s.Output, s.CacheRead, s.CacheWrite) > wire.MaxAITokens || s.CostNanos > wire.MaxAICostNanos {
		return errUsageTooLarge
	}
	if c.Model != "" {
		s.Model = c.Model
	}
	if c.Provider != "" {
		s.Provider = c.Provider
	}
	p.c, p.set = s, true
	return nil
}

// takeUsage returns the usage not yet sent, and forgets it; nil when
// there is none.
func (j *JobContext) takeUsage() *AIUsage {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.usage.set {
		return nil
	}
	u := j.usage.c.View()
	j.usage = aiPending{}
	return u
}

// restoreUsage adds back usage a heartbeat failed to send.
func (j *JobContext) restoreUsage(u *AIUsage) {
	if u == nil {
		return
	}
	c, err := wire.CheckAIUsage("usage", u)
	if err != nil {
		return // it was checked when reported
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	_ = j.usage.add(c) // within bounds: it was sent as one report
}

// usageValue takes the job's usage not yet sent as a frame's Value; nil
// when there is none.
func usageValue(j *JobContext) *structpb.Value {
	u := j.takeUsage()
	if u == nil {
		return nil
	}
	v, _ := valueOf(u)
	return v
}

// AIUsageQuery narrows GET /api/v1/ai/usage. Zero fields take the
// server's defaults: To now, From 24 hours before it, grouped by namespace,
// no buckets.
type AIUsageQuery struct {
	From, To time.Time
	GroupBy  string // "queue", "model", "tag" or "namespace"
	// Step, whole hours or days ("1h", "6h", "1d"), adds Buckets to the
	// answer: the same sums per step from From.
	Step string
}

func (q AIUsageQuery) encode() string {
	v := url.Values{}
	if !q.From.IsZero() {
		v.Set("from", q.From.UTC().Format(time.RFC3339))
	}
	if !q.To.IsZero() {
		v.Set("to", q.To.UTC().Format(time.RFC3339))
	}
	if q.GroupBy != "" {
		v.Set("group_by", q.GroupBy)
	}
	if q.Step != "" {
		v.Set("step", q.Step)
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// GetAIUsage returns the namespace's model usage over whole UTC hours,
// per group, and per step when q.Step is set (docs/api/ai.md).
func (c *Client) GetAIUsage(ctx context.Context, q AIUsageQuery) (*AIUsageResponse, error) {
	var out AIUsageResponse
	if _, err := c.do(ctx, "GET", "/api/v1/ai/usage"+q.encode(), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

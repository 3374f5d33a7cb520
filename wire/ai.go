package wire

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// AI usage. A worker reports what a job's model calls used on ack, fail
// and heartbeat; the shard adds each report to the job's totals and to
// per-hour counters of its namespace, queue, model and tags
// (docs/api/ai.md).

// AIUsage is one report of model usage, or a job's totals. Token counts
// are whole numbers; cost_usd is a decimal string of dollars, at most 9
// places after the point, summed exactly (never as a float).
type AIUsage struct {
	InputTokens      int64  `json:"input_tokens,omitempty"`
	OutputTokens     int64  `json:"output_tokens,omitempty"`
	CacheReadTokens  int64  `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64  `json:"cache_write_tokens,omitempty"`
	CostUSD          string `json:"cost_usd,omitempty"`
	Model            string `json:"model,omitempty"`
	Provider         string `json:"provider,omitempty"`
}

// Bounds of one usage report.
const (
	MaxAITokens      = 1_000_000_000_000       // tokens of one kind in one report
	MaxAICostNanos   = 1_000_000 * AICostScale // $1,000,000 in one report
	MaxAINameBytes   = 128                     // model, provider
	AICostScale      = 1_000_000_000           // cost_usd is counted in nano-dollars
	AICostMaxDecimal = 9
	// MaxAIUsageSeries bounds the distinct models and the distinct tags a
	// namespace's usage counts apart in one UTC hour; past it they count
	// under AIUsageOther.
	MaxAIUsageSeries = 1000
	AIUsageOther     = "(other)"
	// AIUsageRetention is how long the hourly usage counters are kept.
	AIUsageRetention = 40 * 24 * time.Hour
)

// AIUsageCounts is a checked report: tokens and cost in nano-dollars.
type AIUsageCounts struct {
	Input, Output, CacheRead, CacheWrite int64
	CostNanos                            int64
	Model, Provider                      string
}

// IsZero says whether the report adds nothing and names nothing.
func (c AIUsageCounts) IsZero() bool { return c == AIUsageCounts{} }

// CheckAIUsage validates u; field is its name in the request ("usage",
// "acks[0].usage"), so a bad value is a *FieldError naming e.g.
// usage.cost_usd.
func CheckAIUsage(field string, u *AIUsage) (AIUsageCounts, error) {
	var c AIUsageCounts
	if u == nil {
		return c, nil
	}
	for _, t := range []struct {
		name string
		v    int64
		to   *int64
	}{{"input_tokens", u.InputTokens, &c.Input}, {"output_tokens", u.OutputTokens, &c.Output},
		{"cache_read_tokens", u.CacheReadTokens, &c.CacheRead}, {"cache_write_tokens", u.CacheWriteTokens, &c.CacheWrite}} {
		if t.v < 0 || t.v > MaxAITokens {
			return c, fieldErr(field+"."+t.name, "%s must be 0 to %d; got %d", t.name, int64(MaxAITokens), t.v)
		}
		*t.to = t.v
	}
	if u.CostUSD != "" {
		n, err := ParseCostUSD(u.CostUSD)
		if err != nil {
			return c, fieldErr(field+".cost_usd", "cost_usd %v", err)
		}
		if n > MaxAICostNanos {
			return c, fieldErr(field+".cost_usd", "cost_usd must be at most 1000000 in one report; got %s", u.CostUSD)
		}
		c.CostNanos = n
	}
	for _, s := range []struct{ name, v string }{{"model", u.Model}, {"provider", u.Provider}} {
		if len(s.v) > MaxAINameBytes {
			return c, fieldErr(field+"."+s.name, "%s must be at most %d bytes; got %d", s.name, MaxAINameBytes, len(s.v))
		}
		for i := 0; i < len(s.v); i++ {
			if s.v[i] < 0x20 || s.v[i] == 0x7f {
				return c, fieldErr(field+"."+s.name, "%s must hold no control characters", s.name)
			}
		}
	}
	c.Model, c.Provider = u.Model, u.Provider
	return c, nil
}

// ParseCostUSD reads a non-negative decimal dollar amount ("0.0042",
// "12", "3.5") into nano-dollars, exactly.
func ParseCostUSD(s string) (int64, error) {
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || (dot && frac == "") || len(frac) > AICostMaxDecimal || len(whole) > 10 {
		return 0, fmt.Errorf("must be a decimal such as \"0.0042\", at most %d places after the point; got %q", AICostMaxDecimal, s)
	}
	for _, part := range []string{whole, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return 0, fmt.Errorf("must be a non-negative decimal such as \"0.0042\"; got %q", s)
			}
		}
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", AICostMaxDecimal-len(frac)), 10, 64)
	}
	return w*AICostScale + f, nil
}

// FormatCostUSD writes nano-dollars as a decimal string without trailing
// zeros ("0.0042", "12").
func FormatCostUSD(n int64) string {
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	s := strconv.FormatInt(n/AICostScale, 10)
	if f := n % AICostScale; f != 0 {
		s += "." + strings.TrimRight(strconv.FormatInt(AICostScale+f, 10)[1:], "0")
	}
	return sign + s
}

// View is the report as JSON shows it.
func (c AIUsageCounts) View() *AIUsage {
	return &AIUsage{InputTokens: c.Input, OutputTokens: c.Output, CacheReadTokens: c.CacheRead,
		CacheWriteTokens: c.CacheWrite, CostUSD: FormatCostUSD(c.CostNanos), Model: c.Model, Provider: c.Provider}
}

// Groupings of GET /api/v1/ai/usage.
const (
	AIGroupNamespace = "namespace"
	AIGroupQueue     = "queue"
	AIGroupModel     = "model"
	AIGroupTag       = "tag"
)

// AIUsageGroup is one group's totals over the range: Key is the queue,
// the model, the tag as "key=value", or the namespace.
type AIUsageGroup struct {
	Key              string `json:"key"`
	Reports          int64  `json:"reports"`
	InputTokens      int64  `json:"input_tokens"`
	OutputTokens     int64  `json:"output_tokens"`
	CacheReadTokens  int64  `json:"cache_read_tokens"`
	CacheWriteTokens int64  `json:"cache_write_tokens"`
	CostUSD          string `json:"cost_usd"`
}

// AIUsageResponse is GET /api/v1/ai/usage?from&to&group_by=: the groups'
// totals over [From, To), in whole UTC hours, ordered by key. With
// step= it also holds Step (canonical: "6h", "1d") and Buckets, the same
// sums per step from From; without it both are absent.
type AIUsageResponse struct {
	From    time.Time       `json:"from"`
	To      time.Time       `json:"to"`
	GroupBy string          `json:"group_by"`
	Groups  []AIUsageGroup  `json:"groups"`
	Step    string          `json:"step,omitempty"`
	Buckets []AIUsageBucket `json:"buckets,omitempty"`
}

// AIUsageBucket is one step of an AIUsageResponse: the groups' totals over
// [Start, Start+step), the last bucket cut at the response's To; every
// step of the range has one, with no groups when nothing was reported.
type AIUsageBucket struct {
	Start  time.Time      `json:"start"`
	Groups []AIUsageGroup `json:"groups"`
}

// CheckAIGroupBy validates group_by ("" is namespace).
func CheckAIGroupBy(g string) (string, error) {
	switch g {
	case "":
		return AIGroupNamespace, nil
	case AIGroupNamespace, AIGroupQueue, AIGroupModel, AIGroupTag:
		return g, nil
	}
	return "", fieldErr("group_by", "group_by must be queue, model, tag or namespace, not %q", g)
}

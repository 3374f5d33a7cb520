package keys

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func aiCases() []*gcase {
	ns, q := gNS, gQueue
	hour := gCreated - gCreated%int64(time.Hour)
	kinds := &gcase{call: "AI Kind constants"}
	for _, k := range []struct {
		name      string
		got, want byte
	}{{"KindAIUsage", KindAIUsage, 'm'}, {"KindJobAI", KindJobAI, 'J'}, {"KindBudget", KindBudget, 'G'}} {
		kinds.key = append(kinds.key, k.got)
		kinds.parts = append(kinds.parts, part{fmt.Sprintf("%s '%c' (%s)", k.name, k.want, kindNames[k.want]), []byte{k.want}})
		kinds.covers = append(kinds.covers, k.name)
	}
	kinds.parse("distinct from the other kinds", func(t *testing.T, _ []byte) {
		others := append(append(kindCases()[0].key, eventCases()[0].key...), auditCases()[0].key...)
		for _, k := range others {
			require.NotContains(t, []byte{KindAIUsage, KindJobAI, KindBudget}, k)
		}
	})
	dims := &gcase{call: "AI usage dimensions", key: []byte{AIDimNamespace, AIDimQueue, AIDimModel, AIDimTag},
		covers: []string{"AIDimNamespace", "AIDimQueue", "AIDimModel", "AIDimTag"},
		parts: []part{{"AIDimNamespace 'n'", []byte{'n'}}, {"AIDimQueue 'q'", []byte{'q'}},
			{"AIDimModel 'o'", []byte{'o'}}, {"AIDimTag 't'", []byte{'t'}}}}
	return []*gcase{
		kinds, dims,
		kc("AIUsageMark", AIUsageMark(ns), "ns", ns).is(head(ns, 'm')),
		kc("AIUsageHour", AIUsageHour(ns, hour), "ns", ns, "hour", hour).is(head(ns, 'm'), be64("hour start (unix ns)", hour)),
		kc("AIUsageSeriesCount", AIUsageSeriesCount(ns, hour, AIDimModel), "ns", ns, "hour", hour, "dim", "AIDimModel").
			is(head(ns, 'm'), be64("hour start (unix ns)", hour), sep(), u8("dimension 'o' (AIDimModel)", AIDimModel)),
		kc("AIUsage", AIUsage(ns, hour, AIDimQueue, q), "ns", ns, "hour", hour, "dim", "AIDimQueue", "value", q).
			is(head(ns, 'm'), be64("hour start (unix ns)", hour), u8("dimension 'q' (AIDimQueue)", AIDimQueue), text("value", q)).
			parse("ParseAIUsage", func(t *testing.T, key []byte) {
				h, dim, v, err := ParseAIUsage(ns, key)
				require.NoError(t, err)
				require.Equal(t, []any{hour, AIDimQueue, q}, []any{h, dim, v})
				_, _, _, err = ParseAIUsage(ns, AIUsageSeriesCount(ns, hour, AIDimQueue))
				require.Error(t, err)
				_, _, _, err = ParseAIUsage(ns, AIUsageMark(ns))
				require.Error(t, err)
				_, _, _, err = ParseAIUsage(ns, Job(ns, gJob))
				require.Error(t, err)
			}),
		kc("JobAI", JobAI(ns, gJob), "ns", ns, "id", gJob).is(head(ns, 'J'), text("job id", gJob)),
		kc("BudgetPrefix", BudgetPrefix(ns), "ns", ns).is(head(ns, 'G')),
		kc("Budget", Budget(ns, "daily-llm"), "ns", ns, "name", "daily-llm").is(head(ns, 'G'), text("budget name", "daily-llm")),
	}
}

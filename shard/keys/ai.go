package keys

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// AI usage and budgets (keys.go lists the rest of the layout):
//
//	<ns> 00 'm'                                  the hour the usage counters were last trimmed below (8B)
//	<ns> 00 'm' <hour 8B> 00 <dim 1B>            how many series of dim the hour counts apart
//	<ns> 00 'm' <hour 8B> <dim 1B> <value>       one series' usage in the UTC hour starting then
//	<ns> 00 'J' <job id>                         a job's usage totals and its budget hold
//	<ns> 00 'G' <budget name>                    a budget
//
// The counters sort by hour first, so a range query is one scan and a
// trim one range delete. Everything lies under the namespace, so a purge,
// a backup and a move take it with the rest.
const (
	KindAIUsage byte = 'm'
	KindJobAI   byte = 'J'
	KindBudget  byte = 'G'
)

// The dimensions of the usage counters, on-disk format. None is 0, so the
// series counts of an hour sort before its series.
const (
	AIDimNamespace byte = 'n' // value ""
	AIDimQueue     byte = 'q'
	AIDimModel     byte = 'o'
	AIDimTag       byte = 't' // value "key=value"
)

// AIUsageMark is the key of ns's trim mark, and the prefix of every
// usage counter of ns.
func AIUsageMark(ns string) []byte { return kindPrefix(ns, KindAIUsage, 0) }

// AIUsageHour is the prefix of ns's counters of the hour starting at
// hour (unix ns).
func AIUsageHour(ns string, hour int64) []byte {
	return binary.BigEndian.AppendUint64(kindPrefix(ns, KindAIUsage, 8), uint64(hour))
}

// AIUsageSeriesCount is the key of the count of dim's series in an hour.
func AIUsageSeriesCount(ns string, hour int64, dim byte) []byte {
	return append(AIUsageHour(ns, hour), 0, dim)
}

// AIUsage is the key of one series' counters in an hour.
func AIUsage(ns string, hour int64, dim byte, value string) []byte {
	return append(append(AIUsageHour(ns, hour), dim), value...)
}

// ParseAIUsage returns the hour, dimension and value of one of ns's
// usage counters; a series count or the mark is an error.
func ParseAIUsage(ns string, key []byte) (hour int64, dim byte, value string, err error) {
	p := AIUsageMark(ns)
	if !bytes.HasPrefix(key, p) || len(key) < len(p)+9 || key[len(p)+8] == 0 {
		return 0, 0, "", fmt.Errorf("keys: %q is not a usage counter of %q", key, ns)
	}
	rest := key[len(p):]
	return int64(binary.BigEndian.Uint64(rest)), rest[8], string(rest[9:]), nil
}

// JobAI is the key of a job's usage record.
func JobAI(ns, id string) []byte { return append(kindPrefix(ns, KindJobAI, len(id)), id...) }

// BudgetPrefix is the prefix of every budget of ns.
func BudgetPrefix(ns string) []byte { return kindPrefix(ns, KindBudget, 0) }

// Budget is the key of ns's budget name.
func Budget(ns, name string) []byte { return append(kindPrefix(ns, KindBudget, len(name)), name...) }

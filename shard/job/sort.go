package job

import "sort"

// sortedKeys makes map encoding deterministic: every replica must write
// the same bytes.
func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

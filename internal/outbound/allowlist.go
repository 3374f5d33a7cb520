package outbound

import (
	"encoding/json"
	"fmt"

	"github.com/jobbie/jobbie/internal/apierr"
)

// MaxAllowList is how many entries a namespace's egress allow-list may
// hold.
const MaxAllowList = 64

// ParseAllowList reads a namespace's egress allow-list as an API request
// sent it (egress_allow: an array of strings, null or [] for none) and
// checks it, its refusal a 400 naming the field or the entry at fault
// (egress_allow[i]). None is nil. The gateway and the shard both check
// with it, so the rule is one.
func ParseAllowList(raw json.RawMessage) ([]string, error) {
	var allow []string
	if err := json.Unmarshal(raw, &allow); err != nil {
		return nil, apierr.Field("egress_allow", "egress_allow must be an array of host names, \"*.domain\" patterns or IP addresses (null for none)")
	}
	if len(allow) > MaxAllowList {
		return nil, apierr.Field("egress_allow", "egress_allow has %d entries; the limit is %d", len(allow), MaxAllowList)
	}
	for i, e := range allow {
		if CheckAllowList([]string{e}) != nil {
			f := fmt.Sprintf("egress_allow[%d]", i)
			return nil, apierr.Field(f, "%s (%q) is not a host name, \"*.domain\" pattern or IP address", f, e)
		}
	}
	if len(allow) == 0 {
		return nil, nil
	}
	return allow, nil
}

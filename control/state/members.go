package state

import (
	"github.com/jobbie/jobbie/control/state/internal/layout"
	"github.com/jobbie/jobbie/internal/replica"
)

// SetMemberHTTPCmd records where a member serves HTTP.
type SetMemberHTTPCmd struct {
	NodeID   string `json:"node_id"`
	HTTPAddr string `json:"http_addr"`
}

func applySetMemberHTTP(tx *replica.Tx, c *SetMemberHTTPCmd) (replica.None, error) {
	mustSet(tx, layout.MemberHTTP(c.NodeID), []byte(c.HTTPAddr))
	return replica.None{}, nil
}

package control

import (
	"github.com/jobbie/jobbie/control/internal/layout"
	"github.com/jobbie/jobbie/internal/replica"
)

// setMemberHTTPCmd records where a member serves HTTP.
type setMemberHTTPCmd struct {
	NodeID   string `json:"node_id"`
	HTTPAddr string `json:"http_addr"`
}

func applySetMemberHTTP(tx *replica.Tx, c *setMemberHTTPCmd) (replica.None, error) {
	mustSet(tx, layout.MemberHTTP(c.NodeID), []byte(c.HTTPAddr))
	return replica.None{}, nil
}

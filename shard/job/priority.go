package job

import (
	"fmt"

	"github.com/jobbie/jobbie/wire"
)

// Priority orders pending jobs: lower values are fetched first.
type Priority uint8

// On-disk values, never renumber.
const (
	Critical Priority = 0
	High     Priority = 1
	Normal   Priority = 2
)

func (p Priority) String() string {
	switch p {
	case Critical:
		return wire.PriorityCritical
	case High:
		return wire.PriorityHigh
	default:
		return wire.PriorityNormal
	}
}

// ParsePriority parses a priority name; "" means normal.
func ParsePriority(s string) (Priority, error) {
	switch s {
	case "", wire.PriorityNormal:
		return Normal, nil
	case wire.PriorityHigh:
		return High, nil
	case wire.PriorityCritical:
		return Critical, nil
	}
	return 0, fmt.Errorf("priority %q is not one of critical, high, normal", s)
}

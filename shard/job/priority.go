package job

import "fmt"

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
		return "critical"
	case High:
		return "high"
	default:
		return "normal"
	}
}

// ParsePriority parses a priority name; "" means normal.
func ParsePriority(s string) (Priority, error) {
	switch s {
	case "", "normal":
		return Normal, nil
	case "high":
		return High, nil
	case "critical":
		return Critical, nil
	}
	return 0, fmt.Errorf("priority %q is not one of critical, high, normal", s)
}

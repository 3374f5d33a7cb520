//go:build !race

package gateway

// loadScale scales the rates the rate-limit tests offer (see the race
// build's).
const loadScale = 1.0

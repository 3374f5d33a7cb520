//go:build race

package gateway

// loadScale scales the rates the rate-limit tests offer: under the race
// detector a test process serves a quarter of its usual load, and rates
// it cannot serve would be measured as its own delays.
const loadScale = 0.25

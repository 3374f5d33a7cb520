//go:build !linux || !cgo

package roles

// WithHugePages does nothing where Pebble does not allocate through glibc.
func WithHugePages() {}

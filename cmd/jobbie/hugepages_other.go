//go:build !linux || !cgo

package main

// withHugePages does nothing where Pebble does not allocate through glibc.
func withHugePages() {}

//go:build race

package replica

const raceBuild = true

//go:build linux && cgo

package roles

import (
	"os"
	"strings"
	"syscall"
)

// hugePagesTunable has glibc's malloc ask for transparent huge pages
// (madvise) on the memory it maps. Pebble takes its memtables (64 MiB
// each) and block cache from C malloc; on 4 KiB pages each new memtable
// costs 16,384 page faults, about 0.2 s of CPU on the virtual machines
// measured (docs/BENCHMARKS.md), against 15 ms on huge pages.
const hugePagesTunable = "glibc.malloc.hugetlb=1"

// serverRoles are the commands that run Pebble.
var serverRoles = map[string]bool{"dev": true, "shard": true, "control": true}

// WithHugePages re-executes a server role once with the tunable added to
// GLIBC_TUNABLES, which glibc reads only at start. JOBBIE_HUGEPAGES=0, or
// a hugetlb tunable already set, leaves the process as it is; so does any
// failure to re-execute.
func WithHugePages() {
	if len(os.Args) < 2 || !serverRoles[os.Args[1]] || os.Getenv("JOBBIE_HUGEPAGES") == "0" {
		return
	}
	cur, set := os.LookupEnv("GLIBC_TUNABLES")
	if strings.Contains(cur, "glibc.malloc.hugetlb") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	tunables := hugePagesTunable
	if set && cur != "" {
		tunables = cur + ":" + hugePagesTunable
	}
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GLIBC_TUNABLES=") {
			env = append(env, kv)
		}
	}
	_ = syscall.Exec(exe, os.Args, append(env, "GLIBC_TUNABLES="+tunables))
}

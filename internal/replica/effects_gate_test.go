package replica

import (
	"sync"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

// lastCommandKind is the format byte of the newest command entry in n's
// log: entryCommands or entryEffects.
func lastCommandKind(t *testing.T, n *Node) byte {
	t.Helper()
	last, err := n.logs.LastIndex()
	require.NoError(t, err)
	for i := last; i > 0; i-- {
		var l raft.Log
		require.NoError(t, n.logs.GetLog(i, &l))
		if l.Type == raft.LogCommand && len(l.Data) > 0 {
			return l.Data[0]
		}
	}
	t.Fatal("no command entry in the log")
	return 0
}

// A leader with Config.Effects proposes effects entries only while it has
// another member and every other member is known to read them
// (Config.EffectsReader); otherwise commands, which every member applies.
func TestEffectsOnlyWhenEveryOtherMemberReadsThem(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	reads := map[string]bool{}
	reader := func(id string) bool {
		mu.Lock()
		defer mu.Unlock()
		return reads[id]
	}
	set := func(id string, v bool) {
		mu.Lock()
		reads[id] = v
		mu.Unlock()
	}
	c := newClusterOf(t, 1, func(cfg *Config) { cfg.Effects, cfg.EffectsReader = true, reader }, func(string) *Registry {
		return (&cachedCounter{}).registry()
	})
	propose := func(want byte, why string) {
		t.Helper()
		leader := c.leader()
		_, err := leader.Propose(ctxT(t), Command(cmdAdd, []byte{1}))
		require.NoError(t, err)
		require.Equal(t, want, lastCommandKind(t, leader), why)
	}
	propose(entryCommands, "a lone member keeps commands")

	c.join(ctxT(t), "n2")
	propose(entryCommands, "n2 is not known to read effects")
	set("n2", true)
	propose(entryEffects, "every other member reads them")

	c.join(ctxT(t), "n3")
	propose(entryCommands, "n3 is not known to read effects")
	set("n3", true)
	propose(entryEffects, "every other member reads them again")

	dumps := convergedDumps(t, c.members())
	for i := range dumps {
		require.Equal(t, dumps[0], dumps[i], "entries of both kinds leave every member with the same state")
	}
}

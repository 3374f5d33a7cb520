package wire

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJSONDepth(t *testing.T) {
	for raw, want := range map[string]int{
		`1`:                        0,
		`"[[[{"`:                   0,
		`[]`:                       1,
		`{"a":[1,{"b":[]}]}`:       4,
		`[[1],[2],[3]]`:            2,
		`["\"[[[", {"\\":"]]]{"}]`: 2,
		`{"a":"\\\"[","b":[[]]}`:   3,
		strings.Repeat("[", 300) + strings.Repeat("]", 300): 300,
	} {
		require.Equal(t, want, JSONDepth([]byte(raw)), raw)
	}
}

package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every key family has a first byte of its own: two families sharing one
// would meet in each other's scans, range deletes and sweeps. The
// prefixes are constants spread over the package's files, so the test
// reads them from the source.
func TestPrefixesAreDistinct(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	owner := map[uint64]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "prefix") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				require.True(t, ok, "%s: %s is not a literal", f, name.Name)
				v, err := strconv.ParseUint(lit.Value, 0, 8)
				require.NoError(t, err, name.Name)
				prev, dup := owner[v]
				require.False(t, dup, "%s and %s share the prefix 0x%02x", prev, name.Name, v)
				owner[v] = name.Name
			}
			return true
		})
	}
	require.Greater(t, len(owner), 30, "the test found the prefixes")
}

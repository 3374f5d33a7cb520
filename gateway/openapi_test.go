package gateway

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/stretchr/testify/require"

	apidoc "github.com/jobbie/jobbie/docs/api"
)

// The committed docs/api/openapi.json is what the route table and the
// wire types make of it now (-update-openapi writes it).
func TestOpenAPIIsCurrent(t *testing.T) {
	want, err := buildOpenAPI()
	require.NoError(t, err)
	if *updateOpenAPI {
		require.NoError(t, os.WriteFile(openAPIFile, want, 0o644))
	}
	got, err := os.ReadFile(openAPIFile)
	require.NoError(t, err)
	require.True(t, string(want) == string(got),
		"docs/api/openapi.json is stale: go test ./gateway -run TestOpenAPIIsCurrent -update-openapi")
	require.Equal(t, got, apidoc.OpenAPI, "the gateway embeds the file itself")
}

// Every route of the route table is in the committed document, and
// nothing else is: methods and paths, a parameter written {name}.
func TestOpenAPIHasEveryRouteAndNoOther(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(apidoc.OpenAPI, &doc))
	var documented, served []string
	for path, item := range doc.Paths {
		for method := range item {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	for _, rt := range routeTable {
		served = append(served, rt.method+" "+openAPIPath(rt.path))
	}
	sort.Strings(documented)
	sort.Strings(served)
	require.Equal(t, served, documented)
}

// The document is valid OpenAPI 3.1: it builds as a model, and validates
// against the specification's own schema.
func TestOpenAPIIsValid(t *testing.T) {
	t.Parallel()
	doc, err := libopenapi.NewDocument(apidoc.OpenAPI)
	require.NoError(t, err)
	require.Equal(t, "3.1.0", doc.GetVersion())
	_, errs := doc.BuildV3Model()
	require.Empty(t, errs)
	v, verrs := validator.NewValidator(doc)
	require.Empty(t, verrs)
	ok, problems := v.ValidateDocument()
	for _, p := range problems {
		t.Errorf("%s: %s", p.Message, p.Reason)
		for _, se := range p.SchemaValidationErrors {
			t.Errorf("  at %s: %s", se.FieldPath, se.Reason)
		}
	}
	require.True(t, ok)
	ids := map[string]bool{}
	camel := regexp.MustCompile(`^[a-z]+([A-Z][a-z0-9]*)*$`)
	for _, o := range operations {
		require.Regexp(t, camel, o.id, "operationIds are camelCase")
		require.False(t, ids[o.id], "operationId %s is used twice", o.id)
		ids[o.id] = true
	}
}

// The gateway serves the document to anyone, as JSON, cacheable, and
// answers 304 to a client that has this version.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.do(t, http.MethodGet, "/api/v1/openapi.json", "", nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.Equal(t, apidoc.OpenAPI, r.body)
	require.Contains(t, r.header.Get("Cache-Control"), "max-age=")
	etag := r.header.Get("ETag")
	require.NotEmpty(t, etag)
	again := b.do(t, http.MethodGet, "/api/v1/openapi.json", "", nil, "If-None-Match", etag)
	require.Equal(t, http.StatusNotModified, again.status)
	require.Empty(t, again.body)
	b.do(t, http.MethodPost, "/api/v1/openapi.json", "", nil).requireError(t, http.StatusMethodNotAllowed, "method_not_allowed")
}

// The document's ErrorCode enum holds every ErrorCode constant wire
// declares, so a new code cannot answer outside the document.
func TestOpenAPIListsEveryErrorCode(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files, err := filepath.Glob("../wire/*.go")
	require.NoError(t, err)
	var declared []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "ErrorCode" {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					require.True(t, ok, "an ErrorCode constant is a string literal")
					s, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					declared = append(declared, s)
				}
			}
		}
	}
	sort.Strings(declared)
	require.NotEmpty(t, declared)
	require.Equal(t, declared, errorCodes())
}

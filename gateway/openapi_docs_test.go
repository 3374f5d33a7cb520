package gateway

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// wireDocs are the doc comments of wire's types ("Type") and their fields
// ("Type.GoField"), which become the schemas' descriptions: the document
// says what wire's source says.
type wireDocs map[string]string

func readWireDocs() (wireDocs, error) {
	files, err := filepath.Glob(filepath.Join("..", "wire", "*.go"))
	if err != nil {
		return nil, err
	}
	out := wireDocs{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				out[ts.Name.Name] = text(doc)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, field := range st.Fields.List {
					d := text(field.Doc)
					if c := text(field.Comment); c != "" {
						d = strings.TrimSpace(d + " " + c)
					}
					for _, n := range field.Names {
						out[ts.Name.Name+"."+n.Name] = d
					}
				}
			}
		}
	}
	return out, nil
}

// text is a comment group as one paragraph.
func text(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	return strings.Join(strings.Fields(g.Text()), " ")
}

// withDoc is sc with a description (beside a $ref too: OpenAPI 3.1).
func withDoc(sc obj, d string) obj {
	out := obj{"description": d}
	for k, v := range sc {
		out[k] = v
	}
	return out
}

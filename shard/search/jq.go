package search

import (
	"errors"
	"fmt"
	"strings"

	"github.com/itchyny/gojq"
)

// payload_jq is evaluated against every candidate of a scan, inside the
// shard, with the tenant's input. So it is not jq: it is a subset in which
// every expression yields at most one value and has no loop, recursion,
// variable, I/O or environment access. One evaluation then costs at most
// O(expression size × payload size), whatever the user writes.
//
// Allowed:
//
//	.  .a  .a.b  ."a"  .["a"]  .[0]  .[-1]       identity, field, literal index
//	?                                              optional on any term (.a?)
//	== != < <= > >=  and  or  |  ( )               comparisons, logic, pipes
//	not  (as "x | not" and as "not(x)")
//	"s" 1 -1.5 true false null  [a, b]  {k: v}     literals; array and object
//	                                               literals of allowed expressions
//	if c then a elif c2 then b else d end          conditionals (branches are
//	                                               allowed expressions, so still
//	                                               loop-free)
//	contains(x) startswith(s) endswith(s) has(k)
//	length ascii_downcase ascii_upcase
//
// Everything else is refused with a 400 naming the construct: def,
// reduce, foreach, try/catch, label/break, "..", variables ($x, $__loc__,
// $ENV) and "as" bindings, iteration (.[]), slices, "," outside an array
// literal, arithmetic and "//", assignment operators, string
// interpolation, @formats, imports, and every other function (env, input,
// path, getpath, limit, range, until, error, halt, test, …).
//
// contains follows jq (substring for strings, recursive containment for
// arrays and objects) with one extension: an array and a non-array
// argument, an error in jq, asks whether the array contains that value,
// so the seed's `.tags | contains("vip")` works on ["vip", "beta"]. It
// equals jq's `contains(["vip"])`, whose elements match by substring
// (["vip-gold"] contains "vip" too).

// allowedFuncs maps each allowed function to its arities.
var allowedFuncs = map[string][]int{
	"contains": {1}, "startswith": {1}, "endswith": {1}, "has": {1},
	"length": {0}, "ascii_downcase": {0}, "ascii_upcase": {0}, "not": {0, 1},
}

// containsFunc is the name contains is compiled under: gojq resolves its
// builtins before custom functions, so the extension needs its own name.
// Users cannot call it directly, since it is not in allowedFuncs.
const containsFunc = "_search_contains"

// containsBudget bounds the element comparisons of one contains call
// (array-in-array containment is quadratic).
const containsBudget = 1 << 18

// parseJQ parses src and checks it against the subset. The returned query
// has `not(x)` rewritten to `x | not` and contains renamed, ready for
// compileJQ. Errors are plain messages; the caller names the field.
func parseJQ(src string) (*gojq.Query, error) {
	if strings.TrimSpace(src) == "" {
		return nil, errors.New("must not be empty")
	}
	if len(src) > MaxJQBytes {
		return nil, fmt.Errorf("expression is %d bytes; the limit is %d", len(src), MaxJQBytes)
	}
	q, err := gojq.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("invalid expression: %v", err)
	}
	if err := checkQuery(q); err != nil {
		return nil, err
	}
	return q, nil
}

// compileJQ compiles a checked query.
func compileJQ(src string) (*gojq.Code, error) {
	q, err := parseJQ(src)
	if err != nil {
		return nil, err
	}
	code, err := gojq.Compile(q, gojq.WithFunction(containsFunc, 1, 1, jqContains))
	if err != nil {
		return nil, fmt.Errorf("invalid expression: %v", err)
	}
	return code, nil
}

func notAllowed(what string) error { return fmt.Errorf("%s is not allowed", what) }

func checkQuery(q *gojq.Query) error {
	if q == nil {
		return nil
	}
	if len(q.FuncDefs) > 0 {
		return notAllowed("def")
	}
	if q.Meta != nil || len(q.Imports) > 0 {
		return notAllowed("import/include")
	}
	if len(q.Patterns) > 0 {
		return notAllowed(`binding with "as"`)
	}
	if q.Term != nil {
		return checkTerm(q.Term)
	}
	switch q.Op {
	case gojq.OpPipe, gojq.OpEq, gojq.OpNe, gojq.OpLt, gojq.OpLe, gojq.OpGt, gojq.OpGe, gojq.OpAnd, gojq.OpOr:
	case gojq.OpComma:
		return notAllowed(`"," outside an array literal`)
	case 0:
		// Neither a term nor an operator: nothing but a comment ("# x").
		return errors.New("the query is empty")
	default:
		return notAllowed(fmt.Sprintf("operator %q", q.Op.String()))
	}
	if err := checkQuery(q.Left); err != nil {
		return err
	}
	return checkQuery(q.Right)
}

func checkTerm(t *gojq.Term) error {
	switch t.Type {
	case gojq.TermTypeIdentity, gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse, gojq.TermTypeNumber:
	case gojq.TermTypeIndex:
		if err := checkIndex(t.Index); err != nil {
			return err
		}
	case gojq.TermTypeString:
		if len(t.Str.Queries) > 0 {
			return notAllowed("string interpolation")
		}
	case gojq.TermTypeFunc:
		if err := checkFunc(t); err != nil {
			return err
		}
	case gojq.TermTypeObject:
		for _, kv := range t.Object.KeyVals {
			switch {
			case kv.KeyQuery != nil:
				return notAllowed("a computed object key")
			case strings.HasPrefix(kv.Key, "$"):
				return notAllowed(fmt.Sprintf("variable %s", kv.Key))
			case kv.KeyString != nil && len(kv.KeyString.Queries) > 0:
				return notAllowed("string interpolation")
			}
			if err := checkQuery(kv.Val); err != nil {
				return err
			}
		}
	case gojq.TermTypeArray:
		if t.Array.Query != nil {
			if err := checkElems(t.Array.Query); err != nil {
				return err
			}
		}
	case gojq.TermTypeUnary:
		if err := checkTerm(t.Unary.Term); err != nil {
			return err
		}
	case gojq.TermTypeIf:
		if err := checkIf(t.If); err != nil {
			return err
		}
	case gojq.TermTypeQuery:
		if err := checkQuery(t.Query); err != nil {
			return err
		}
	case gojq.TermTypeRecurse:
		return notAllowed(`recursion ".."`)
	case gojq.TermTypeFormat:
		return notAllowed(fmt.Sprintf("format %s", t.Format))
	case gojq.TermTypeTry:
		return notAllowed(`try/catch (use "?")`)
	case gojq.TermTypeReduce:
		return notAllowed("reduce")
	case gojq.TermTypeForeach:
		return notAllowed("foreach")
	case gojq.TermTypeLabel:
		return notAllowed("label")
	case gojq.TermTypeBreak:
		return notAllowed("break")
	default:
		return notAllowed(fmt.Sprintf("term %q", t.String()))
	}
	for _, s := range t.SuffixList {
		switch {
		case s.Iter:
			return notAllowed(`iteration ".[]"`)
		case s.Index != nil:
			if err := checkIndex(s.Index); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkElems checks an array literal's elements: "," is allowed only at
// their top, so each element yields at most one value and the array at
// most one array (nested commas could multiply outputs exponentially).
func checkElems(q *gojq.Query) error {
	if q.Term == nil && q.Op == gojq.OpComma && len(q.Patterns) == 0 && len(q.FuncDefs) == 0 {
		if err := checkElems(q.Left); err != nil {
			return err
		}
		return checkElems(q.Right)
	}
	return checkQuery(q)
}

func checkIf(e *gojq.If) error {
	for _, q := range []*gojq.Query{e.Cond, e.Then, e.Else} {
		if err := checkQuery(q); err != nil {
			return err
		}
	}
	for _, ei := range e.Elif {
		if err := checkQuery(ei.Cond); err != nil {
			return err
		}
		if err := checkQuery(ei.Then); err != nil {
			return err
		}
	}
	return nil
}

// checkIndex allows .name, ."name" and .[literal]: an index computed from
// the input would let the payload drive evaluation.
func checkIndex(ix *gojq.Index) error {
	switch {
	case ix.IsSlice:
		return notAllowed("slice")
	case ix.Name != "":
		return nil
	case ix.Str != nil:
		if len(ix.Str.Queries) > 0 {
			return notAllowed("string interpolation")
		}
		return nil
	case ix.Start != nil && isLiteralKey(ix.Start):
		return nil
	}
	return fmt.Errorf("index %q is not allowed: an index must be a literal number or string", ix.String())
}

func isLiteralKey(q *gojq.Query) bool {
	if q.Term == nil || len(q.Term.SuffixList) > 0 || len(q.Patterns) > 0 || len(q.FuncDefs) > 0 {
		return false
	}
	t := q.Term
	switch t.Type {
	case gojq.TermTypeNumber:
		return true
	case gojq.TermTypeString:
		return len(t.Str.Queries) == 0
	case gojq.TermTypeUnary:
		return t.Unary.Op == gojq.OpSub && t.Unary.Term.Type == gojq.TermTypeNumber && len(t.Unary.Term.SuffixList) == 0
	}
	return false
}

// checkFunc allows the listed functions with their arities, then rewrites
// not(x) to (x | not) and renames contains to its extended version.
func checkFunc(t *gojq.Term) error {
	f := t.Func
	switch {
	case f.Name == "$__loc__" || f.Name == "$ENV":
		return notAllowed(f.Name)
	case strings.HasPrefix(f.Name, "$"):
		return notAllowed(fmt.Sprintf("variable %s", f.Name))
	}
	arities, ok := allowedFuncs[f.Name]
	if !ok {
		return notAllowed(fmt.Sprintf("function %q", f.Name))
	}
	okArity := false
	for _, n := range arities {
		okArity = okArity || n == len(f.Args)
	}
	if !okArity {
		return fmt.Errorf("function %q does not take %d argument(s) here", f.Name, len(f.Args))
	}
	for _, a := range f.Args {
		if err := checkQuery(a); err != nil {
			return err
		}
	}
	switch {
	case f.Name == "not" && len(f.Args) == 1:
		notTerm := &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{Name: "not"}}
		t.Type, t.Func = gojq.TermTypeQuery, nil
		t.Query = &gojq.Query{Left: f.Args[0], Op: gojq.OpPipe, Right: &gojq.Query{Term: notTerm}}
	case f.Name == "contains":
		f.Name = containsFunc
	}
	return nil
}

// jqContains is contains with the array-and-scalar extension.
func jqContains(v any, args []any) any {
	x := args[0]
	kv, kx := kindOf(v), kindOf(x)
	if kv == kindArray && kx != kindArray {
		x, kx = []any{x}, kindArray
	}
	if kv != kx {
		return fmt.Errorf("contains: %s and %s cannot have their containment checked", kindNames[kv], kindNames[kx])
	}
	budget := containsBudget
	ok := contains(v, x, &budget)
	if budget < 0 {
		return errors.New("contains: too many comparisons")
	}
	return ok
}

// contains is jq's containment of values of the same kind; values of
// different kinds inside arrays and objects simply do not contain each
// other, as in jq.
func contains(l, r any, budget *int) bool {
	if *budget--; *budget < 0 {
		return false
	}
	switch l := l.(type) {
	case string:
		r, ok := r.(string)
		return ok && strings.Contains(l, r)
	case []any:
		r, ok := r.([]any)
		if !ok {
			return false
		}
	next:
		for _, re := range r {
			for _, le := range l {
				if contains(le, re, budget) {
					continue next
				}
				if *budget < 0 {
					return false
				}
			}
			return false
		}
		return true
	case map[string]any:
		r, ok := r.(map[string]any)
		if !ok || len(l) < len(r) {
			return false
		}
		for k, rv := range r {
			lv, ok := l[k]
			if !ok || !contains(lv, rv, budget) {
				return false
			}
		}
		return true
	}
	if kindOf(l) != kindOf(r) {
		return false
	}
	return gojq.Compare(l, r) == 0
}

type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
	kindOther
)

var kindNames = [...]string{"null", "boolean", "number", "string", "array", "object", "value"}

func kindOf(v any) kind {
	switch v.(type) {
	case nil:
		return kindNull
	case bool:
		return kindBool
	case string:
		return kindString
	case []any:
		return kindArray
	case map[string]any:
		return kindObject
	}
	if _, ok := gojq.ToFloat64(v); ok {
		return kindNumber
	}
	return kindOther
}

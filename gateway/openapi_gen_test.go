package gateway

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jobbie/jobbie/wire"
)

// docs/api/openapi.json is generated here from the route table, the
// per-route facts of openapi_ops_test.go and the wire types themselves (by
// reflection), so a route or a field added without documentation fails
// TestOpenAPIIsCurrent. `go test ./gateway -run TestOpenAPIIsCurrent
// -update-openapi` writes it again.
var updateOpenAPI = flag.Bool("update-openapi", false, "write docs/api/openapi.json from the route table and wire")

const openAPIFile = "../docs/api/openapi.json"

// obj is one JSON object of the document; encoding/json writes its keys
// sorted, so the document is the same bytes for the same input.
type obj = map[string]any

// schemas builds components/schemas from Go types: a named struct is a
// schema of its own, referenced by name.
type schemas struct {
	docs  wireDocs
	defs  obj
	types map[string]reflect.Type
	// input: the schemas of request bodies, whose required fields are
	// those of requiredIn (Go decodes a body lacking any field); an
	// answer's are every field Go always writes.
	input bool
}

var (
	timeType   = reflect.TypeFor[time.Time]()
	rawType    = reflect.TypeFor[json.RawMessage]()
	numberType = reflect.TypeFor[json.Number]()
)

func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

// of is the schema of a value of t.
func (s *schemas) of(t reflect.Type) obj {
	switch {
	case t == timeType:
		return obj{"type": "string", "format": "date-time"}
	case t == rawType:
		return obj{} // any JSON value; fields narrow it in fieldSchemas
	case t == numberType:
		return obj{"type": "number"} // a string in Go, a number in JSON
	}
	switch t.Kind() {
	case reflect.Pointer:
		return s.of(t.Elem())
	case reflect.String:
		if t == reflect.TypeFor[wire.ErrorCode]() {
			return ref("ErrorCode")
		}
		return obj{"type": "string"}
	case reflect.Bool:
		return obj{"type": "boolean"}
	case reflect.Int, reflect.Int32, reflect.Uint32:
		return obj{"type": "integer"}
	case reflect.Int64, reflect.Uint64:
		return obj{"type": "integer", "format": "int64"}
	case reflect.Float32, reflect.Float64:
		return obj{"type": "number"}
	case reflect.Slice, reflect.Array:
		return obj{"type": "array", "items": s.of(t.Elem())}
	case reflect.Map:
		return obj{"type": "object", "additionalProperties": s.of(t.Elem())}
	case reflect.Interface:
		return obj{}
	case reflect.Struct:
		if t.Name() == "" {
			return s.object(t, "")
		}
		name := s.name(t)
		if _, ok := s.defs[name]; !ok {
			s.defs[name] = obj{} // a placeholder while it is built: types may nest
			s.defs[name] = s.object(t, name)
		}
		return ref(name)
	}
	panic(fmt.Sprintf("openapi: no schema for %s", t))
}

// name is a type's name in components/schemas: its Go name (two
// types of one name would be one schema: refused).
func (s *schemas) name(t reflect.Type) string {
	if seen, ok := s.types[t.Name()]; ok && seen != t {
		panic(fmt.Sprintf("openapi: two types named %s: %s and %s", t.Name(), seen, t))
	}
	s.types[t.Name()] = t
	return t.Name()
}

// object is a struct's schema: its JSON fields (embedded structs' fields
// inlined, as encoding/json does), required unless omitempty, nullable
// where Go writes null (a nil pointer, slice or map without omitempty),
// and no other field: every body is decoded strictly.
func (s *schemas) object(t reflect.Type, name string) obj {
	props, required := obj{}, []string{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" || (!f.IsExported() && !f.Anonymous) {
				continue
			}
			jname, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && jname == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				walk(ft)
				continue
			}
			if jname == "" {
				jname = f.Name
			}
			omit := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
			sc := s.of(f.Type)
			if f.Type == rawType && durationFields[jname] {
				sc = obj{"type": []string{"string", "number", "null"},
					"description": `A duration: "5s"-style, or a number of seconds; null for none (or the default).`}
			}
			if over, ok := fieldSchemas[t.Name()+"."+jname]; ok { // the declaring type's
				sc = over(sc)
			}
			must := requiredIn[t.Name()+"."+jname]
			if s.input && must || !s.input && !omit {
				required = append(required, jname)
			}
			if !omit && !(s.input && must) { // a null where one is required is refused
				switch f.Type.Kind() {
				case reflect.Pointer, reflect.Slice, reflect.Map:
					sc = nullable(sc)
				}
			}
			if d := s.docs[t.Name()+"."+f.Name]; d != "" {
				sc = withDoc(sc, d)
			}
			props[jname] = sc
		}
	}
	walk(t)
	out := obj{"type": "object", "properties": props, "additionalProperties": false}
	if d := s.docs[t.Name()]; d != "" && name != "" {
		out["description"] = d
	}
	if len(required) > 0 {
		sort.Strings(required)
		out["required"] = required
	}
	return out
}

// merge adds in's schemas to s's: one a type has as a request body's
// part and as an answer's part alike is one schema; where they differ
// (required fields), the request's is named <Type>Input. It returns the
// names so renamed.
func (s *schemas) merge(in *schemas) map[string]bool {
	renamed := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for name, sc := range in.defs {
			out, both := s.defs[name]
			if both && !renamed[name] && !sameJSON(renameRefs(sc, renamed), out) {
				renamed[name], changed = true, true
			}
		}
	}
	for name, sc := range in.defs {
		_, both := s.defs[name]
		switch {
		case renamed[name]:
			s.defs[name+"Input"] = renameRefs(sc, renamed)
		case !both:
			s.defs[name] = renameRefs(sc, renamed)
		}
	}
	return renamed
}

// renameRefs is v with its references to renamed schemas pointing at
// their <Type>Input.
func renameRefs(v any, renamed map[string]bool) any {
	switch v := v.(type) {
	case obj:
		out := obj{}
		for k, x := range v {
			if r, ok := x.(string); ok && k == "$ref" && renamed[strings.TrimPrefix(r, "#/components/schemas/")] {
				x = r + "Input"
			}
			out[k] = renameRefs(x, renamed)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = renameRefs(x, renamed)
		}
		return out
	}
	return v
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// nullable allows null besides what sc allows.
func nullable(sc obj) obj {
	if len(sc) == 0 {
		return sc // any value, null too
	}
	if t, ok := sc["type"].(string); ok {
		out := obj{}
		for k, v := range sc {
			out[k] = v
		}
		out["type"] = []string{t, "null"}
		return out
	}
	if ts, ok := sc["type"].([]string); ok {
		for _, t := range ts {
			if t == "null" {
				return sc
			}
		}
	}
	return obj{"anyOf": []any{sc, obj{"type": "null"}}}
}

// pathParam matches a fiber path parameter.
var pathParam = regexp.MustCompile(`:([a-z_]+)`)

// openAPIPath is a route's path as OpenAPI writes it: /jobs/{id}.
func openAPIPath(p string) string { return pathParam.ReplaceAllString(p, "{$1}") }

// buildOpenAPI is the whole document.
func buildOpenAPI() ([]byte, error) {
	docs, err := readWireDocs()
	if err != nil {
		return nil, err
	}
	s := &schemas{docs: docs, defs: obj{}, types: map[string]reflect.Type{}}
	in := &schemas{docs: docs, defs: obj{}, types: map[string]reflect.Type{}, input: true}
	s.defs["ErrorCode"] = obj{"type": "string", "enum": errorCodes(),
		"description": "A stable error code; internal/apierr maps each to its HTTP status."}
	// The error envelope, and the data of the event streams, which no
	// JSON answer names.
	s.of(reflect.TypeFor[wire.ErrorBody]())
	s.of(reflect.TypeFor[wire.Event]())
	// A bulk request's filter, which wire keeps as raw JSON
	// (fieldSchemas refers to it); a search request has its fields inline.
	in.of(reflect.TypeFor[wire.SearchFilter]())
	paths := obj{}
	for _, rt := range routeTable {
		key := rt.method + " " + rt.path
		op, ok := operations[key]
		if !ok {
			return nil, fmt.Errorf("no operation in openapi_ops_test.go for %s", key)
		}
		item, _ := paths[openAPIPath(rt.path)].(obj)
		if item == nil {
			item = obj{}
			paths[openAPIPath(rt.path)] = item
		}
		item[strings.ToLower(rt.method)] = s.operation(in, rt, op)
	}
	for key := range operations {
		if !routed(key) {
			return nil, fmt.Errorf("openapi_ops_test.go describes %s, which the route table does not have", key)
		}
	}
	renamed := s.merge(in)
	for _, item := range paths {
		for _, o := range item.(obj) {
			if body, ok := o.(obj)["requestBody"]; ok {
				o.(obj)["requestBody"] = renameRefs(body, renamed)
			}
		}
	}
	doc := obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":   "Jobbie API",
			"version": "1",
			"summary": "Jobbie's public HTTP/JSON API: jobs, queues, schedules, search and bulk, workers and events, webhooks, and tenant administration.",
			"description": "Every route takes an API key (`Authorization: Bearer <key>`) but GET /api/v1/openapi.json. " +
				"A key works in its default namespace; `X-Jobbie-Namespace` picks another it may use. " +
				"Errors are always `{\"error\":{\"code\",\"message\",\"field\",\"request_id\"}}`. " +
				"Human documentation: docs/api/README.md.",
		},
		"servers": []any{obj{"url": "/", "description": "the gateway (make dev: http://127.0.0.1:8080)"}},
		"tags":    tagList(),
		"paths":   paths,
		"components": obj{
			"schemas":         s.defs,
			"securitySchemes": obj{"apiKey": obj{"type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "A Jobbie API key."}},
			"parameters":      obj{"Namespace": namespaceParam, "IdempotencyKey": idempotencyKeyParam, "TraceParent": traceParentParam, "TraceState": traceStateParam},
			"headers":         responseHeaders,
			"responses":       errorResponses(),
		},
		"security": []any{obj{"apiKey": []string{}}},
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func routed(key string) bool {
	for _, rt := range routeTable {
		if rt.method+" "+rt.path == key {
			return true
		}
	}
	return false
}

// operation is one route's operation object.
func (s *schemas) operation(in *schemas, rt route, op op) obj {
	out := obj{"operationId": op.id, "tags": []string{op.tag}, "summary": op.summary}
	var params []any
	for _, m := range pathParam.FindAllStringSubmatch(rt.path, -1) {
		params = append(params, obj{"name": m[1], "in": "path", "required": true, "schema": obj{"type": "string"}})
	}
	for _, q := range op.query {
		params = append(params, q)
	}
	public := rt.checks&public != 0
	if !public {
		params = append(params, ref2("parameters", "Namespace"))
	}
	idempotent := rt.method == post && wire.IdempotentRoutes[rt.path]
	if idempotent {
		params = append(params, ref2("parameters", "IdempotencyKey"))
	}
	if traced[rt.path] {
		params = append(params, ref2("parameters", "TraceParent"), ref2("parameters", "TraceState"))
	}
	if params != nil {
		out["parameters"] = params
	}
	if op.req != nil {
		body := obj{"required": !op.optionalBody, "content": obj{"application/json": obj{"schema": in.of(reflect.TypeOf(op.req))}}}
		out["requestBody"] = body
	}
	responses := obj{}
	for _, r := range op.ok {
		responses[strconv.Itoa(r.status)] = s.response(r)
		if idempotent && (r.status == 201 || r.status == 202) {
			// A repeat of the key's first request: its answer again, 200.
			replay := r
			replay.status, replay.desc = 200, "The first answer to this Idempotency-Key, given back (Idempotency-Replayed: true)."
			replay.headers = append(slices.Clone(r.headers), wire.IdempotencyReplayedHeader)
			responses["200"] = s.response(replay)
		}
	}
	if idempotent {
		responses["422"] = ref2("responses", responseName(422))
	}
	if public {
		out["security"] = []any{}
		// Only the gateway's own limits apply: connections per address.
		responses["429"] = ref2("responses", responseName(429))
	} else {
		for _, code := range errorStatuses(rt, op) {
			responses[strconv.Itoa(code)] = ref2("responses", responseName(code))
		}
	}
	out["responses"] = responses
	return out
}

// response is a successful opAnswer's object.
func (s *schemas) response(r opAnswer) obj {
	out := obj{"description": r.desc}
	switch {
	case r.body == nil && r.media == "":
		return out
	case r.media != "":
		sc := obj{"type": "string"}
		if r.schema != nil {
			sc = r.schema
		} else if r.body != nil {
			sc = s.of(reflect.TypeOf(r.body))
		}
		out["content"] = obj{r.media: obj{"schema": sc}}
	default:
		out["content"] = obj{"application/json": obj{"schema": s.of(reflect.TypeOf(r.body))}}
	}
	if len(r.headers) > 0 {
		h := obj{}
		for _, name := range r.headers {
			h[name] = ref2("headers", name)
		}
		out["headers"] = h
	}
	return out
}

// responseName is a status's name in components/responses: its text
// without spaces (TooManyRequests).
func responseName(code int) string { return strings.ReplaceAll(http.StatusText(code), " ", "") }

func ref2(kind, name string) obj { return obj{"$ref": "#/components/" + kind + "/" + name} }

// errorStatuses is every error status a route can opAnswer: those of every
// admitted request (a bad key, RBAC, rate limits, no leader, a bug), a
// body's, a write's, and a shard's opAnswer too large for a forwarded one.
func errorStatuses(rt route, op op) []int {
	codes := []int{400, 401, 403, 404, 429, 500, 503}
	if op.req != nil || rt.method != get {
		codes = append(codes, 413)
	}
	if rt.method != get || op.conflictOnRead {
		codes = append(codes, 409)
	}
	if rt.checks&scoped != 0 {
		codes = append(codes, 502)
	}
	sort.Ints(codes)
	return codes
}

// errorResponses are components/responses: the error envelope under each
// status it comes with.
func errorResponses() obj {
	body := obj{"application/json": obj{"schema": ref("ErrorBody")}}
	out := obj{}
	for code, desc := range map[int]string{
		400: "Bad input (bad_request or invalid_json); `field` names the offending field.",
		401: "No, an invalid, an expired or a revoked API key (unauthenticated).",
		403: "The key's role or namespaces do not allow it (forbidden).",
		404: "An unknown object, or another tenant's (not_found).",
		409: "A state conflict: conflict, lease_mismatch, deletion_protected, namespace_not_empty, role_in_use, ambiguous_name, schema_changed.",
		413: "The body or a value in it is over its limit (payload_too_large).",
		429: "Over a rate limit, a quota or a long-poll cap: the code names it; Retry-After says when to try again.",
		500: "An unexpected failure (internal).",
		502: "The shard's opAnswer is over what a gateway passes on (shard_answer_too_large): ask for less.",
		503: "The shard has no leader, the namespace is moving, or a dependency is down: retry after Retry-After.",
		422: "The Idempotency-Key was sent before with a different request (idempotency_key_reused); `field` names the header.",
	} {
		r := obj{"description": desc, "content": body, "headers": obj{"X-Request-Id": ref2("headers", "X-Request-Id")}}
		if code == 429 || code == 503 {
			r["headers"] = obj{"X-Request-Id": ref2("headers", "X-Request-Id"), "Retry-After": ref2("headers", "Retry-After"),
				"RateLimit": ref2("headers", "RateLimit"), "RateLimit-Policy": ref2("headers", "RateLimit-Policy")}
		}
		out[responseName(code)] = r
	}
	return out
}

var namespaceParam = obj{
	"name": wire.NamespaceHeader, "in": "header", "required": false,
	"description": "The namespace the request works in; the key's default namespace when absent.",
	"schema":      obj{"type": "string"},
}

var idempotencyKeyParam = obj{
	"name": wire.IdempotencyKeyHeader, "in": "header", "required": false,
	"description": "Makes the request safe to repeat: a repeat with the same key and request within 24 h answers the first answer again (200, Idempotency-Replayed: true); the same key with another request is 422. 1 to 255 printable ASCII bytes. Only the routes that list it take it; any other route refuses it (400).",
	"schema":      obj{"type": "string", "minLength": 1, "maxLength": wire.MaxIdempotencyKeyBytes},
}

// traced are the routes that take a W3C trace context as headers (a
// batch's apply to its items that name none).
var traced = map[string]bool{"/api/v1/enqueue": true, "/api/v1/enqueue/batch": true}

var traceParentParam = obj{
	"name": wire.TraceParentHeader, "in": "header", "required": false,
	"description": "The job's W3C trace context (version 00), kept with the job and given back on fetch, read and push.",
	"schema":      obj{"type": "string", "pattern": "^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$"},
}

var traceStateParam = obj{
	"name": wire.TraceStateHeader, "in": "header", "required": false,
	"description": "The W3C tracestate beside traceparent: at most 32 members and 512 bytes.",
	"schema":      obj{"type": "string", "maxLength": 512},
}

var responseHeaders = obj{
	wire.IdempotencyReplayedHeader: obj{"description": "\"true\" on an answer given back for a repeated Idempotency-Key.", "schema": obj{"type": "string", "enum": []string{"true"}}},
	"X-Request-Id":                 obj{"description": "The request's id (a client may set it; every opAnswer has it).", "schema": obj{"type": "string"}},
	"Retry-After":                  obj{"description": "Seconds to wait before trying again.", "schema": obj{"type": "integer", "minimum": 0}},
	"RateLimit":                    obj{"description": "What this gateway would still admit, per limit (draft-ietf-httpapi-ratelimit-headers): `\"rps\";r=57;t=1`.", "schema": obj{"type": "string"}},
	"RateLimit-Policy":             obj{"description": "The plan's limits: `\"rps\";q=200;w=1, \"eps\";q=1000;w=1`.", "schema": obj{"type": "string"}},
	"Last-Event-ID":                obj{"description": "Resumes an event stream after the event it names.", "schema": obj{"type": "string"}},
	"ETag":                         obj{"description": "The document's version.", "schema": obj{"type": "string"}},
}

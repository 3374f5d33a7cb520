// Package api holds the OpenAPI document of Jobbie's public API
// (openapi.json beside this file), embedded so the gateway serves the
// repository's one copy. gateway/openapi_gen_test.go writes it from the
// route table and the wire types, and fails while it is stale.
package api

import _ "embed"

// OpenAPI is docs/api/openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

package wire

import (
	"encoding/json"
	"time"
)

// Namespaces as objects: POST /api/v1/namespaces creates one with its
// settings, GET/PATCH/DELETE /api/v1/namespaces/{name} read, change and
// delete it.

// Bounds of the settings of namespaces and keys.
const (
	// MaxDescription is the longest description of a namespace or a key,
	// in bytes of UTF-8.
	MaxDescription = 1024
	// MinRetention and MaxRetention bound a namespace's retention, as
	// they bound a queue's.
	MinRetention = time.Minute
	MaxRetention = 10 * 365 * 24 * time.Hour
)

// CreateNamespaceRequest is POST /api/v1/namespaces. Only Name is
// required. Retention is a duration ("168h", or a number of seconds)
// between MinRetention and MaxRetention; absent or null for none.
type CreateNamespaceRequest struct {
	Name               string          `json:"name"`
	Description        string          `json:"description,omitempty"`
	Retention          json.RawMessage `json:"retention,omitempty"`
	DeletionProtection bool            `json:"deletion_protection,omitempty"`
}

// UpdateNamespaceRequest is PATCH /api/v1/namespaces/{name}: only the
// fields present change, and null puts a field back to its default (no
// description, no retention, deletion protection off), as in a JSON
// merge patch (RFC 7396). Each field is kept as sent so that "absent"
// and null stay apart.
type UpdateNamespaceRequest struct {
	Description        json.RawMessage `json:"description,omitempty"`
	Retention          json.RawMessage `json:"retention,omitempty"`
	DeletionProtection json.RawMessage `json:"deletion_protection,omitempty"`
}

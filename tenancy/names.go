package tenancy

import (
	"fmt"
	"regexp"
	"strings"
)

// Name rules. Namespaces and tenants are DNS-label-like so they are safe in
// URLs, key prefixes and log lines; queues allow dots and colons because
// producers use them as hierarchy ("emails.send").
var (
	tenantRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	queueRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)
	keyNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,63}$`)
	alertRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// DefaultNamespace is created with every tenant.
const DefaultNamespace = "default"

// ValidateNamespace reports whether name is a valid namespace name.
func ValidateNamespace(name string) error {
	if !isLabel(name) {
		return fmt.Errorf("namespace %q must be 1-63 lowercase letters, digits or '-', starting with a letter or digit", name)
	}
	return nil
}

// ValidateTenantName reports whether name is a valid tenant name.
func ValidateTenantName(name string) error {
	if !tenantRE.MatchString(name) {
		return fmt.Errorf("tenant name %q must be 1-63 lowercase letters, digits or '-', starting with a letter or digit", name)
	}
	return nil
}

// ValidateQueue reports whether name is a valid queue name.
func ValidateQueue(name string) error {
	if !queueRE.MatchString(name) {
		return fmt.Errorf("queue %q must be 1-128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit", name)
	}
	return nil
}

// ValidateKeyName reports whether name is a valid API key name.
func ValidateKeyName(name string) error {
	if !keyNameRE.MatchString(name) {
		return fmt.Errorf("key name %q must be 1-64 letters, digits, spaces, '.', '_', ':' or '-'", name)
	}
	return nil
}

// ValidateAlertName reports whether name is a valid alert rule name (a
// path segment of /api/v1/alerts/{name}).
func ValidateAlertName(name string) error {
	if !alertRE.MatchString(name) {
		return fmt.Errorf("alert rule name %q must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// ValidateTenantID reports whether id has the shape of a tenant id.
func ValidateTenantID(id string) error {
	if !isTenantID(id) {
		return fmt.Errorf("tenant id %q is malformed", id)
	}
	return nil
}

// ShardNamespace is the key a shard stores a namespace under: the tenant id
// and the namespace name. Names are per tenant, so the tenant id is what
// keeps two tenants' "default" namespaces apart on a shared shard.
func ShardNamespace(tenantID, namespace string) string {
	return tenantID + "/" + namespace
}

// ParseShardNamespace splits and validates a shard namespace key.
func ParseShardNamespace(key string) (tenantID, namespace string, err error) {
	tid, ns, ok := strings.Cut(key, "/")
	if !ok {
		return "", "", fmt.Errorf("shard namespace %q must be <tenant id>/<namespace>", key)
	}
	if err := ValidateTenantID(tid); err != nil {
		return "", "", err
	}
	if err := ValidateNamespace(ns); err != nil {
		return "", "", err
	}
	return tid, ns, nil
}

// isLabel matches ^[a-z0-9][a-z0-9-]{0,62}$ without a regexp: namespaces
// are checked on every request a shard serves.
func isLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// isTenantID matches ^t_[0-9a-z]{26}$.
func isTenantID(s string) bool {
	if len(s) != 28 || s[0] != 't' || s[1] != '_' {
		return false
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

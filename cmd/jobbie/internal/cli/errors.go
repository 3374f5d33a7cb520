package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// How the commands word an API's refusals for a terminal: without the
// SDK's "jobbie:" prefix (main adds its own), with a hint where the fix is
// local. The error stays unwrappable.

type wordedError struct {
	msg string
	err error
}

func (e *wordedError) Error() string { return e.msg }
func (e *wordedError) Unwrap() error { return e.err }

// apiError words a gateway's refusal or an SDK error.
func apiError(err error) error {
	msg, ok := strings.CutPrefix(err.Error(), "jobbie: ")
	if client.IsUnauthenticated(err) {
		msg += " (check --key, --key-file, $" + gatewayAPI.keyEnv + " or $" + gatewayAPI.keyFileEnv + ")"
	} else if !ok {
		return err
	}
	return &wordedError{msg: msg, err: err}
}

// refused is apiError with a hint on a 403: the built-in roles whose keys
// may do act, since the fix is another key.
func refused(err error, act tenancy.Action) error {
	if !client.IsForbidden(err) || act == "" {
		return apiError(err)
	}
	msg, _ := strings.CutPrefix(err.Error(), "jobbie: ")
	return &wordedError{msg: fmt.Sprintf("%s (this needs a key with %s: %s)", msg, act, orList(rolesWith(act))), err: err}
}

// controlError words the control plane's refusal as its code and message,
// and the field of a 400; another error without the SDK's prefix.
func controlError(err error) error {
	e, ok := client.AsError(err)
	if !ok {
		msg, _ := strings.CutPrefix(err.Error(), "jobbie: ")
		return &wordedError{msg: msg, err: err}
	}
	msg := e.Code + ": " + e.Message
	if e.Field != "" {
		msg += " (field " + e.Field + ")"
	}
	return &wordedError{msg: msg, err: err}
}

// rolesWith lists the built-in roles granted act, from the one RBAC
// policy table.
func rolesWith(act tenancy.Action) []string {
	var out []string
	for _, r := range tenancy.TenantRoles {
		for _, p := range tenancy.BuiltinPermissions(r) {
			if slices.ContainsFunc(p.Actions, func(a string) bool { return tenancy.MatchPattern(a, string(act)) }) {
				out = append(out, string(r))
				break
			}
		}
	}
	return out
}

// orList is "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

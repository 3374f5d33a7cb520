package outbound

import (
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Kind says what went wrong with an outbound request.
type Kind int

const (
	// KindRefused: the URL or the address it resolved to is not allowed
	// (Error.Addr is set when an address was refused). Nothing was sent.
	KindRefused Kind = iota + 1
	// KindBusy: the tenant had Config.PerTenant requests in flight and
	// this one could not wait (FailFast) or its context ended while it
	// waited. Nothing was sent.
	KindBusy
	// KindTimeout: the request's deadline passed before an answer.
	KindTimeout
	// KindNetwork: resolving, connecting, TLS, or the connection failed.
	KindNetwork
	// KindStatus: the endpoint answered 4xx or 5xx (Error.Status,
	// Error.Body).
	KindStatus
	// KindRedirect: the endpoint answered 3xx; it is not followed
	// (Error.Location).
	KindRedirect
)

var kindNames = map[Kind]string{
	KindRefused: "refused", KindBusy: "busy", KindTimeout: "timeout",
	KindNetwork: "network", KindStatus: "status", KindRedirect: "redirect",
}

func (k Kind) String() string { return kindNames[k] }

// ErrorBodyBytes is how much of an answer's body an Error keeps for its
// message.
const ErrorBodyBytes = 512

// Error is every failure of Client.Do and Client.Check.
type Error struct {
	Kind   Kind
	Tenant string
	// Host is the URL's host; Addr the IP address refused or dialled,
	// when one was; Reason why an address or URL was refused.
	Host, Addr, Reason string
	// Status is the answer's status (KindStatus, KindRedirect); Body its
	// first ErrorBodyBytes; Location a redirect's target.
	Status   int
	Body     []byte
	Location string
	Err      error // the cause, when there is one
}

func (e *Error) Error() string {
	if e.Kind == KindRefused && e.Addr == "" && e.Err != nil {
		return e.Err.Error() // CheckURL's error says it all
	}
	var b strings.Builder
	b.WriteString("outbound: ")
	switch e.Kind {
	case KindRefused:
		switch {
		case e.Addr == "":
			fmt.Fprintf(&b, "refused: %s", e.Reason)
		case e.Host == e.Addr:
			fmt.Fprintf(&b, "refused: %s is not a public address: %s", e.Addr, e.Reason)
		default:
			fmt.Fprintf(&b, "refused: %s resolves to %s, not a public address: %s", e.Host, e.Addr, e.Reason)
		}
	case KindBusy:
		fmt.Fprintf(&b, "tenant %s has all its outbound requests in flight: %s", e.Tenant, e.Reason)
	case KindStatus:
		fmt.Fprintf(&b, "%s answered %d %s", e.Host, e.Status, http.StatusText(e.Status))
		if len(e.Body) > 0 {
			fmt.Fprintf(&b, ": %s", printable(e.Body))
		}
	case KindRedirect:
		fmt.Fprintf(&b, "%s answered %d %s to %q; redirects are not followed", e.Host, e.Status, http.StatusText(e.Status), e.Location)
	default:
		fmt.Fprintf(&b, "%s: %s", e.Kind, e.Host)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// printable is the body's start as text, invalid UTF-8 replaced.
func printable(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

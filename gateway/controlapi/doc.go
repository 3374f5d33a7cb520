// Package controlapi is the gateway's one interface to the control plane:
// Control, every question the gateway asks control as a typed Go call
// with the shapes of package wire, and HTTP, its implementation over
// control's internal API (internal/controlclient: mutual TLS, failover
// between control nodes). A self-hosted node's local API answers the same
// interface from its trust bundle instead (selfhosted.Local), and the
// gateway's tests from memory (gateway/internal/controlfake).
//
// A call fails in one of three ways: control answered another status
// than the call's (an *Error, with control's status, Retry-After and
// error body), control's answer could not be read, or control could not
// be asked at all. ForTenant turns any of them into what the tenant whose
// request made the call is told, the same way for every call.
package controlapi

// Package outbound makes HTTP requests to URLs a tenant configured (push
// handlers, webhook endpoints) so that Jobbie can never be used against
// anyone's internal network, and so that one tenant's slow endpoints
// cannot take another tenant's capacity. It is the egress guard every
// outbound call goes through.
//
// Two checks guard the address. CheckURL, at configuration time, holds
// a URL to https, a host, no userinfo, an allowed port and the
// namespace's egress allow-list; Client.Check also resolves the name and
// refuses one that points inside. Client.Do checks again at dial time, on
// the exact IP being connected (the dialer resolves the name itself and
// connects to the addresses it checked, and net.Dialer.Control checks the
// socket's address once more), so a name that changes its answer between
// a check and the dial (DNS rebinding) cannot pass. Loopback, private,
// link-local (and so cloud metadata), CGNAT, multicast, documentation and
// other special ranges are refused, also in their IPv6 wrappings
// (IPv4-mapped, NAT64, 6to4), unless Config.AllowPrivate, the operator's
// switch for tests and local development.
//
// Redirects are never followed: a 3xx is an answer, reported as a
// KindRedirect error. A response body is read up to Config.MaxBody.
// Each tenant has at most Config.PerTenant requests in flight; past that
// its requests wait for its own slots (or fail at once with KindBusy when
// Config.FailFast), never for another tenant's. Connections are kept
// alive and pooled per target. Every failure is an *Error whose Kind
// tells a caller what happened: refused, busy, timeout, network, status,
// redirect.
package outbound

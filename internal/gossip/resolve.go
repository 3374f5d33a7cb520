package gossip

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// ResolveTimeout bounds the DNS lookups of ResolveJoin.
const ResolveTimeout = 5 * time.Second

// ResolveJoin turns a --join / --discover value into gossip addresses for
// Config.Join or Pool.Join. spec is a comma-separated list whose items are
//
//   - "host:port" (or "[v6]:port"), passed through; a bare host or IP gets
//     DefaultPort;
//   - "dns:<name>[:port]", replaced by one "ip:port" per A and AAAA record
//     of name, with port defaulting to DefaultPort. Pointed at a Kubernetes
//     headless service this yields every ready pod behind it.
//
// Duplicates are dropped and order is kept. An empty spec yields nothing.
// A dns: name that does not resolve, or resolves to no address, is an
// error: a caller starting the first node of a cluster (whose headless
// service has no ready pods yet) should treat that as "start alone".
func ResolveJoin(spec string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ResolveTimeout)
	defer cancel()
	return ResolveJoinContext(ctx, spec)
}

// ResolveJoinContext is ResolveJoin with the caller's context bounding the
// DNS lookups instead of ResolveTimeout.
func ResolveJoinContext(ctx context.Context, spec string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(a string) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(item, "dns:"); ok {
			addrs, err := resolveDNS(ctx, rest)
			if err != nil {
				return nil, fmt.Errorf("gossip: %q: %w", item, err)
			}
			for _, a := range addrs {
				add(a)
			}
			continue
		}
		a, err := hostPort(item)
		if err != nil {
			return nil, fmt.Errorf("gossip: join address %q: %w", item, err)
		}
		add(a)
	}
	return out, nil
}

func resolveDNS(ctx context.Context, rest string) ([]string, error) {
	name, port := rest, strconv.Itoa(DefaultPort)
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		name, port = rest[:i], rest[i+1:]
		if err := checkPort(port); err != nil {
			return nil, err
		}
	}
	if name == "" {
		return nil, errors.New("missing DNS name (want dns:<name>[:port])")
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("%s has no A or AAAA records", name)
	}
	out := make([]string, 0, len(ips))
	for _, ip := range ips {
		out = append(out, net.JoinHostPort(ip.String(), port))
	}
	return out, nil
}

func hostPort(s string) (string, error) {
	if net.ParseIP(s) != nil { // bare IP, including unbracketed IPv6
		return net.JoinHostPort(s, strconv.Itoa(DefaultPort)), nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		if strings.Contains(s, ":") {
			return "", err
		}
		host, port = s, strconv.Itoa(DefaultPort)
	}
	if host == "" {
		return "", errors.New("missing host")
	}
	if err := checkPort(port); err != nil {
		return "", err
	}
	return net.JoinHostPort(host, port), nil
}

func checkPort(p string) error {
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("bad port %q", p)
	}
	return nil
}

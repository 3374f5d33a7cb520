package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// startCmd runs a Raft node of a StatefulSet. Every pod of the set shares
// one command line, yet exactly one must start a new group: ordinal 0,
// and only when no peer is ready, so that pod 0 coming back with an empty
// volume joins the group its peers still hold instead of starting a
// second one beside it.
func startCmd(args []string) error {
	fs := flag.NewFlagSet("start", flag.ContinueOnError)
	var t tlsFlags
	t.register(fs)
	peers := fs.String("peers", "", "the set's headless service and HTTP port, dns:NAME:PORT; each address's /readyz is asked")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cmd := fs.Args()
	if len(cmd) == 0 {
		return errors.New("start: a command after --")
	}
	host, _ := os.Hostname()
	if ordinal(host) == 0 {
		ready, err := anyPeerReady(*peers, &t)
		switch {
		case err != nil:
			return err
		case ready != "":
			fmt.Fprintf(os.Stderr, "jobbie-pod: %s is ready; joining its group\n", ready)
		default:
			fmt.Fprintln(os.Stderr, "jobbie-pod: ordinal 0 and no peer ready; starting with --bootstrap (ignored if this node has state)")
			cmd = append(cmd, "--bootstrap")
		}
	}
	path, err := exec.LookPath(cmd[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, cmd, os.Environ())
}

// ordinal is the StatefulSet ordinal a pod's host name ends with, or -1.
func ordinal(host string) int {
	i := strings.LastIndexByte(host, '-')
	if i < 0 {
		return -1
	}
	n, err := strconv.Atoi(host[i+1:])
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// anyPeerReady returns the address of a peer whose /readyz answers 2xx,
// or "" if none does. A name that does not resolve (yet) has no peers.
func anyPeerReady(peers string, t *tlsFlags) (string, error) {
	if peers == "" {
		return "", nil
	}
	rest, ok := strings.CutPrefix(peers, "dns:")
	if !ok {
		return "", fmt.Errorf("--peers %q: want dns:NAME:PORT", peers)
	}
	name, port, err := net.SplitHostPort(rest)
	if err != nil {
		return "", fmt.Errorf("--peers %q: %w", peers, err)
	}
	scheme := "http"
	if t.ca != "" {
		scheme = "https"
	}
	c, err := t.client(2 * time.Second)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, name)
	if err != nil {
		return "", nil
	}
	own := ownAddrs()
	for _, a := range addrs {
		if own[a] {
			continue
		}
		u := scheme + "://" + net.JoinHostPort(a, port) + "/readyz"
		if get(c, u) == nil {
			return a, nil
		}
	}
	return "", nil
}

func ownAddrs() map[string]bool {
	own := map[string]bool{}
	as, _ := net.InterfaceAddrs()
	for _, a := range as {
		if n, ok := a.(*net.IPNet); ok {
			own[n.IP.String()] = true
		}
	}
	return own
}

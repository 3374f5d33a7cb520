package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// startOptions say how a Raft node of a StatefulSet starts. Every pod of
// the set shares one command line, yet exactly one may start a new group:
// ordinal 0, and only while no peer is ready, so that pod 0 coming back
// with an empty volume joins the group its peers still hold instead of
// starting a second one beside it. Every other pod without state waits
// for a ready peer and asks it to be added.
type startOptions struct {
	tls      tlsFlags
	peers    string          // dns:NAME:PORT, the set's headless service and HTTP port
	dataDir  string          // the node's data directory: state there means a restart
	first    string          // a flag for the pod that starts the group (--bootstrap)
	joinFlag string          // the flag that names ready peers to join (--join-http)
	every    time.Duration   // how often to look again for a ready peer
	host     string          // the pod's host name
	own      map[string]bool // the pod's own addresses, never its peer
}

func startCmd(args []string) error {
	fs := flag.NewFlagSet("start", flag.ContinueOnError)
	var o startOptions
	o.tls.register(fs)
	fs.StringVar(&o.peers, "peers", "", "the set's headless service and HTTP port, dns:NAME:PORT, or HOST:PORT,…; each address's /readyz is asked (none: ordinal 0 gets --first, every other pod starts at once)")
	fs.StringVar(&o.dataDir, "data-dir", "", "the node's data directory; a node with state there starts at once")
	fs.StringVar(&o.first, "first", "", "a flag added for the pod that starts a new group, e.g. --bootstrap")
	fs.StringVar(&o.joinFlag, "join-flag", "", "a flag added as FLAG=<ready peers' host:port,…> for a pod that joins, e.g. --join-http")
	fs.DurationVar(&o.every, "every", 2*time.Second, "how often to look again for a ready peer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cmd := fs.Args()
	if len(cmd) == 0 {
		return errors.New("start: a command after --")
	}
	// A pod's host name is its name; $HOSTNAME, which container runtimes
	// set to it, lets a process outside a pod stand for one.
	if o.host = os.Getenv("HOSTNAME"); o.host == "" {
		o.host, _ = os.Hostname()
	}
	o.own = ownAddrs()
	extra, err := o.decide(context.Background(), os.Stderr)
	if err != nil {
		return err
	}
	cmd = append(cmd, extra...)
	path, err := exec.LookPath(cmd[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, cmd, os.Environ())
}

// decide returns the flags to add: the join flag naming the ready peers,
// the first flag for ordinal 0 when none is ready, nothing for a node
// with state when none is ready; a node with neither waits. Without
// --peers (nodes that cannot ask their peers, such as a self-hosted shard's
// before they join) there is nothing to wait for: ordinal 0 gets the first
// flag and every other pod starts at once, finding its group itself.
func (o *startOptions) decide(ctx context.Context, log io.Writer) ([]string, error) {
	if o.peers == "" {
		if ordinal(o.host) != 0 || o.first == "" {
			fmt.Fprintln(log, "jobbie-pod: no peers to ask; starting as given")
			return nil, nil
		}
		fmt.Fprintf(log, "jobbie-pod: no peers to ask; ordinal 0 starts the group unless the node has state %s\n", o.first)
		return []string{o.first}, nil
	}
	said := false
	for {
		ready, err := readyPeers(ctx, o.peers, &o.tls, o.own)
		if err != nil {
			return nil, err
		}
		switch {
		case len(ready) > 0:
			fmt.Fprintf(log, "jobbie-pod: ready peers %v\n", ready)
			if o.joinFlag == "" {
				return nil, nil
			}
			return []string{o.joinFlag + "=" + strings.Join(ready, ",")}, nil
		case ordinal(o.host) == 0:
			fmt.Fprintf(log, "jobbie-pod: ordinal 0 and no peer ready; starting a new group unless the node has state %s\n", o.first)
			if o.first == "" {
				return nil, nil
			}
			return []string{o.first}, nil
		case hasState(o.dataDir):
			fmt.Fprintln(log, "jobbie-pod: no peer ready; the node has state and resumes from it")
			return nil, nil
		}
		if !said {
			fmt.Fprintf(log, "jobbie-pod: no state and no peer ready behind %s; waiting for one to join\n", o.peers)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(o.every):
		}
	}
}

// hasState: the data directory exists and holds anything.
func hasState(dir string) bool {
	if dir == "" {
		return false
	}
	es, err := os.ReadDir(dir)
	return err == nil && len(es) > 0
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

// readyPeers returns host:port of each peer whose /readyz answers 2xx:
// every address of dns:NAME:PORT (a name that does not resolve yet has
// none), or each HOST:PORT of a list.
func readyPeers(ctx context.Context, peers string, t *tlsFlags, own map[string]bool) ([]string, error) {
	if peers == "" {
		return nil, nil
	}
	var addrs []string
	if rest, ok := strings.CutPrefix(peers, "dns:"); ok {
		name, port, err := net.SplitHostPort(rest)
		if err != nil {
			return nil, fmt.Errorf("--peers %q: %w", peers, err)
		}
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		ips, _ := net.DefaultResolver.LookupHost(lctx, name)
		for _, ip := range ips {
			addrs = append(addrs, net.JoinHostPort(ip, port))
		}
	} else {
		for _, a := range strings.Split(peers, ",") {
			if _, _, err := net.SplitHostPort(a); err != nil {
				return nil, fmt.Errorf("--peers %q: want dns:NAME:PORT or HOST:PORT,…: %w", peers, err)
			}
			addrs = append(addrs, a)
		}
	}
	scheme := "http"
	if t.ca != "" {
		scheme = "https"
	}
	c, err := t.client(2 * time.Second)
	if err != nil {
		return nil, err
	}
	var ready []string
	for _, hp := range addrs {
		if h, _, _ := net.SplitHostPort(hp); own[h] {
			continue
		}
		if get(c, scheme+"://"+hp+"/readyz") == nil {
			ready = append(ready, hp)
		}
	}
	return ready, nil
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

// Command jobbie-pod is the small helper the container image ships beside
// jobbie, for what a FROM-scratch image has no shell or curl to do:
//
//	jobbie-pod probe URL...      a health check (Kubernetes exec probe, compose healthcheck):
//	                             GET each URL, over mutual TLS with --cert/--key/--ca when
//	                             https (a shard node answers /healthz and /readyz only to a
//	                             client certificate it admits); exit 0 only if all answer 2xx.
//	jobbie-pod start -- CMD...   exec a Raft node of a StatefulSet: ordinal 0 starts a new
//	                             group (with --first) only while no peer behind --peers is
//	                             ready; any other pod without state waits for a ready peer
//	                             and names it to CMD (--join-flag). Without --peers, ordinal 0
//	                             gets --first and the others start at once.
//	jobbie-pod pki IDENTITY...   create the CA, a certificate per identity and a gossip
//	                             key in --dir, each only if missing (compose's init service).
//	jobbie-pod cat FILE          print a file, e.g. the operator key control wrote
//	                             (kubectl exec; the image has no shell).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "probe":
		err = probeCmd(os.Args[2:])
	case "start":
		err = startCmd(os.Args[2:])
	case "pki":
		err = pkiCmd(os.Args[2:])
	case "cat":
		err = catCmd(os.Args[2:])
	case "-h", "--help", "help":
		usage()
	default:
		fmt.Fprintf(os.Stderr, "jobbie-pod: unknown command %q\n", os.Args[1])
		usage()
	}
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobbie-pod:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  jobbie-pod probe [--cert F --key F --ca F] [--timeout D] URL...
  jobbie-pod start [--peers dns:NAME:PORT] [--data-dir D] [--first FLAG] [--join-flag FLAG]
                   [--cert F --key F --ca F] -- COMMAND [ARG...]
  jobbie-pod pki --dir DIR [--ca-dir DIR] [--selfhosted-ca-dir DIR] [--control-host H]... [--jobbie PATH] ROLE/[SHARD/]NODE...
  jobbie-pod cat FILE
`)
	os.Exit(2)
}

func catCmd(args []string) error {
	if len(args) != 1 {
		return errors.New("cat: one file")
	}
	b, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(b)
	return err
}

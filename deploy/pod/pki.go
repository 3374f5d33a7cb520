package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// pkiCmd makes what a compose deployment's processes need, through
// `jobbie certs`, each file only if it is missing so that a restart of the
// stack keeps its CA, certificates and gossip key: the CA in --ca-dir,
// then per identity <dir>/<name>.crt and .key (name: the node, or
// <shard>-<node> for a shard node), and <dir>/gossip.key. With
// --selfhosted-ca-dir, also the CA of self-hosted shards there (control's
// --selfhosted-ca-dir) and its certificate as <dir>/selfhosted-ca.crt (the
// gateways' --selfhosted-ca-file); --control-host names control's
// certificates also carry, as joining self-hosted nodes check the name.
func pkiCmd(args []string) error {
	fs := flag.NewFlagSet("pki", flag.ContinueOnError)
	dir := fs.String("dir", "", "where certificates, ca.crt and gossip.key go")
	caDir := fs.String("ca-dir", "", "where the CA (ca.crt, ca.key) lives (default --dir)")
	jobbie := fs.String("jobbie", "/jobbie", "the jobbie binary")
	selfHostedDir := fs.String("selfhosted-ca-dir", "", "where the self-hosted shards' CA lives, made if missing (none: no such CA)")
	var controlHosts []string
	fs.Func("control-host", "a name or address control's certificates also carry (repeatable)", func(v string) error {
		if v = strings.TrimSpace(v); v != "" {
			controlHosts = append(controlHosts, v)
		}
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("pki: --dir is required")
	}
	if *caDir == "" {
		*caDir = *dir
	}
	if fs.NArg() == 0 {
		return errors.New("pki: at least one identity, role/node or shard/<shard>/<node>")
	}
	type issue struct{ role, shard, node, name string }
	var todo []issue
	for _, id := range fs.Args() {
		p := strings.Split(id, "/")
		switch {
		case len(p) == 3 && p[0] == "shard" && p[1] != "" && p[2] != "":
			todo = append(todo, issue{"shard", p[1], p[2], p[1] + "-" + p[2]})
		case len(p) == 2 && p[0] != "shard" && p[1] != "":
			todo = append(todo, issue{p[0], "", p[1], p[1]})
		default:
			return fmt.Errorf("pki: identity %q: want role/node or shard/<shard>/<node>", id)
		}
	}
	run := func(a ...string) error {
		c := exec.Command(*jobbie, a...)
		c.Stdout, c.Stderr = os.Stderr, os.Stderr
		return c.Run()
	}
	if !exists(filepath.Join(*caDir, "ca.key")) {
		if err := run("certs", "ca", "--dir", *caDir); err != nil {
			return err
		}
	}
	if *caDir != *dir {
		if err := copyFile(filepath.Join(*caDir, "ca.crt"), filepath.Join(*dir, "ca.crt")); err != nil {
			return err
		}
	}
	if *selfHostedDir != "" {
		if *selfHostedDir == *caDir || *selfHostedDir == *dir {
			return errors.New("pki: --selfhosted-ca-dir must be a directory of its own: that CA is apart from the deployment's")
		}
		if !exists(filepath.Join(*selfHostedDir, "ca.key")) {
			if err := run("certs", "ca", "--dir", *selfHostedDir); err != nil {
				return err
			}
		}
		if err := copyFile(filepath.Join(*selfHostedDir, "ca.crt"), filepath.Join(*dir, "selfhosted-ca.crt")); err != nil {
			return err
		}
	}
	for _, is := range todo {
		out := filepath.Join(*dir, is.name)
		if exists(out + ".crt") {
			continue
		}
		a := []string{"certs", "issue", "--ca-dir", *caDir, "--role", is.role, "--node", is.node, "--out", out}
		if is.shard != "" {
			a = append(a, "--shard", is.shard, "--host", is.name)
		} else if is.role != "operator" && is.role != "metrics" {
			a = append(a, "--host", is.node)
		}
		if is.role == "control" {
			for _, h := range controlHosts {
				a = append(a, "--host", h)
			}
		}
		if err := run(a...); err != nil {
			return err
		}
	}
	key := filepath.Join(*dir, "gossip.key")
	if !exists(key) {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		if err := os.WriteFile(key, []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "jobbie-pod: pki ready in %s\n", *dir)
	return nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

package deploy

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// selfHostedRun is what composeSelfHosted needs of TestComposeRuns.
type selfHostedRun struct {
	jobbie, dir, ip string   // the node's own loopback address
	control         string   // where it joins (control1, as published)
	gateways        []string // gw1 and gw2, each a tunnel listener control names
	ownerKey        string
	start           func(name string, argv []string)
	log             func(name string) []byte
	eventually      func(what string, f func() error)
}

// composeSelfHosted joins a tenant's one-node self-hosted shard to the
// compose file's hosted side as docs/operate/self-hosting.md says: a token minted through
// gw1, `jobbie shard --join-token … --control-url … --ca-file` on an
// address of its own, which the hosted processes are never told. It joins
// at control1 (whose certificate carries JOBBIE_CONTROL_HOST), dials the
// tunnel addresses control names (JOBBIE_TUNNEL_URL and
// JOBBIE_TUNNEL_URL_GW2: gw1's and gw2's listeners), and a namespace
// placed on it serves a job enqueued through gw1 and worked through gw2.
func composeSelfHosted(t *testing.T, r selfHostedRun) {
	var tok struct {
		Token   string `json:"token"`
		ShardID string `json:"shard_id"`
	}
	call(t, http.DefaultClient, "POST", r.gateways[0]+"/api/v1/shards/join-tokens", r.ownerKey, `{"name":"dc1","nodes":1}`, &tok)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	gk := filepath.Join(r.dir, "selfhosted-gossip.key") // its own gossip pool
	if err := os.WriteFile(gk, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.start("selfhosted-n1", []string{r.jobbie, "shard", "--node-id=n1", "--bootstrap", "--join-token=" + tok.Token,
		"--control-url=" + r.control, "--ca-file=" + filepath.Join(r.dir, "pki", "ca.crt"),
		"--data-dir=" + filepath.Join(r.dir, "selfhosted-n1"), "--gossip-key-file=" + gk,
		"--http=" + r.ip + ":7101", "--raft=" + r.ip + ":7201", "--gossip=" + r.ip + ":7301"})
	for _, gw := range r.gateways {
		r.eventually("the self-hosted node's tunnel to "+gw+" is up", func() error {
			var out struct {
				Shards []struct {
					ID        string
					Connected []string
				}
			}
			if err := try(http.DefaultClient, "GET", gw+"/api/v1/shards", r.ownerKey, "", &out); err != nil {
				return err
			}
			if len(out.Shards) != 1 || out.Shards[0].ID != tok.ShardID || len(out.Shards[0].Connected) != 1 {
				return fmt.Errorf("shards %+v; node log:\n%s", out.Shards, lastLines(r.log("selfhosted-n1")))
			}
			return nil
		})
	}
	call(t, http.DefaultClient, "POST", r.gateways[0]+"/api/v1/namespaces", r.ownerKey, fmt.Sprintf(`{"name":"onprem","shard":%q}`, tok.ShardID), nil)
	var enq, job struct {
		JobID string `json:"job_id"`
	}
	r.eventually("enqueue on the self-hosted shard through gw1", func() error {
		return tryNS(http.DefaultClient, "onprem", "POST", r.gateways[0]+"/api/v1/enqueue", r.ownerKey, `{"queue":"local","payload":{}}`, &enq)
	})
	if err := tryNS(http.DefaultClient, "onprem", "POST", r.gateways[1]+"/api/v1/fetch", r.ownerKey,
		`{"queues":["local"],"worker_id":"w1","timeout":10,"lease_duration":60}`, &job); err != nil || job.JobID != enq.JobID {
		t.Fatalf("fetched %q (%v), want %s", job.JobID, err, enq.JobID)
	}
	if err := tryNS(http.DefaultClient, "onprem", "POST", r.gateways[1]+"/api/v1/ack/"+job.JobID, r.ownerKey, `{}`, nil); err != nil {
		t.Fatal(err)
	}
}

func lastLines(b []byte) []byte {
	if len(b) > 1500 {
		b = b[len(b)-1500:]
	}
	return bytes.TrimSpace(b)
}

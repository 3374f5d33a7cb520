package deploy

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// selfHostedRuns runs values-selfhosted-shard.yaml's three pods in
// namespace "onprem" of fakeCluster c, beside the hosted rendering in
// hostedNS that accepts self-hosted shards: the tenant's owner mints a
// token for three nodes, which goes into the Secret the values name, with
// the hosted CA's certificate; the pods start at once, join at control's
// join Service, form their group and dial the gateway through the tunnel
// Service; a namespace placed on the shard serves a job through that
// gateway. Then the pod that started the group restarts from its volume,
// without joining again.
func selfHostedRuns(t *testing.T, c *fakeCluster, hostedNS, ownerKey string) {
	const ns = "onprem"
	gw := "http://" + c.hosts["prod-jobbie-tunnel."+hostedNS+".svc"] + ":8080" // the gateway holding the tunnels
	var tok struct {
		Token   string `json:"token"`
		ShardID string `json:"shard_id"`
	}
	c.eventually("mint a join token", func() error {
		return try(http.DefaultClient, "POST", gw+"/api/v1/shards/join-tokens", ownerKey, `{"name":"dc1","nodes":3,"expires_in":"1h"}`, &tok)
	})
	hostedCA, err := os.ReadFile(c.secretFile(hostedNS, "jobbie-ca", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, c.secretFile(ns, "jobbie-join-token", "token"), []byte(tok.Token))
	writeFile(t, c.secretFile(ns, "jobbie-hosted-ca", "ca.crt"), hostedCA)
	joinHost := "prod-jobbie-control-join." + hostedNS + ".svc"
	o := render(t, values(t, []string{"values-selfhosted-shard.yaml"}, map[string]any{"selfHosted.controlURL": "https://" + joinHost + ":8081"}))

	// Joining checks control's name: the certificate of the control pod
	// behind the join Service names it.
	for _, p := range c.pods {
		if p.ip != c.hosts[joinHost] {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(p.mounts["tls"], "node.crt"))
		blk, _ := pem.Decode(b)
		if blk == nil {
			t.Fatalf("%s: no certificate", p.name)
		}
		crt, err := x509.ParseCertificate(blk.Bytes)
		if err != nil || !slices.Contains(crt.DNSNames, joinHost) {
			t.Fatalf("%s's certificate names %v, not %s, which self-hosted nodes join at (%v)", p.name, crt.DNSNames, joinHost, err)
		}
	}

	pods := c.install(o, ns)
	for _, p := range pods {
		c.initPod(p)
	}
	for _, p := range pods {
		c.start(p)
	}
	took := c.waitReady(pods, "", 120*time.Second)
	t.Logf("self-hosted: %d pods joined and ready after %s", len(pods), took.Round(100*time.Millisecond))
	for i, p := range pods {
		want := "starting as given"
		if i == 0 {
			want = "ordinal 0 starts the group"
		}
		c.logSays(p, want)
	}
	c.eventually("the hosted side lists the shard's three nodes, each with its tunnel", func() error {
		var out struct {
			Shards []struct {
				ID               string
				Nodes, Connected []string
			}
		}
		if err := try(http.DefaultClient, "GET", gw+"/api/v1/shards", ownerKey, "", &out); err != nil {
			return err
		}
		if len(out.Shards) != 1 || out.Shards[0].ID != tok.ShardID || len(out.Shards[0].Nodes) != 3 || len(out.Shards[0].Connected) != 3 {
			return fmt.Errorf("shards %+v, want %s with 3 nodes connected", out.Shards, tok.ShardID)
		}
		return nil
	})
	call(t, http.DefaultClient, "POST", gw+"/api/v1/namespaces", ownerKey, fmt.Sprintf(`{"name":"onprem","shard":%q}`, tok.ShardID), nil)
	serve := func(queue string) {
		t.Helper()
		var enq, job struct {
			JobID string `json:"job_id"`
		}
		c.eventually("enqueue on the self-hosted shard", func() error {
			return tryNS(http.DefaultClient, "onprem", "POST", gw+"/api/v1/enqueue", ownerKey, `{"queue":"`+queue+`","payload":{}}`, &enq)
		})
		if err := tryNS(http.DefaultClient, "onprem", "POST", gw+"/api/v1/fetch", ownerKey,
			`{"queues":["`+queue+`"],"worker_id":"w1","timeout":10,"lease_duration":60}`, &job); err != nil || job.JobID != enq.JobID {
			t.Fatalf("fetched %q (%v), want %s", job.JobID, err, enq.JobID)
		}
		var got struct{ State string }
		if err := tryNS(http.DefaultClient, "onprem", "POST", gw+"/api/v1/ack/"+job.JobID, ownerKey, `{}`, nil); err != nil {
			t.Fatal(err)
		}
		if err := tryNS(http.DefaultClient, "onprem", "GET", gw+"/api/v1/jobs/"+job.JobID, ownerKey, "", &got); err != nil || got.State != "completed" {
			t.Fatalf("job %s: %q %v", job.JobID, got.State, err)
		}
	}
	serve("onprem.check")

	// The nodes' local API (every pod serves it): a job enqueued there is
	// worked through another pod's, and is visible through the gateway.
	local := func(p *chartPod) string { return "http://" + p.ip + ":8080" }
	var enq, job struct {
		JobID string `json:"job_id"`
	}
	c.eventually("enqueue through a node's local API", func() error {
		return tryNS(http.DefaultClient, "onprem", "POST", local(pods[1])+"/api/v1/enqueue", ownerKey, `{"queue":"onprem.local","payload":{}}`, &enq)
	})
	c.eventually("fetch through another node's local API", func() error {
		return tryNS(http.DefaultClient, "onprem", "POST", local(pods[2])+"/api/v1/fetch", ownerKey,
			`{"queues":["onprem.local"],"worker_id":"w1","timeout":1,"lease_duration":60}`, &job)
	})
	if job.JobID != enq.JobID {
		t.Fatalf("fetched %q through the local API, want %s", job.JobID, enq.JobID)
	}
	if err := tryNS(http.DefaultClient, "onprem", "POST", local(pods[0])+"/api/v1/ack/"+job.JobID, ownerKey, `{}`, nil); err != nil {
		t.Fatal(err)
	}
	// A node's reads come from its own state: a follower's may trail the ack.
	c.eventually("the job worked through the local API reads completed through the gateway", func() error {
		var got struct{ State string }
		if err := tryNS(http.DefaultClient, "onprem", "GET", gw+"/api/v1/jobs/"+job.JobID, ownerKey, "", &got); err != nil || got.State != "completed" {
			return fmt.Errorf("job %s: %q (%v)", job.JobID, got.State, err)
		}
		return nil
	})

	// The pod that started the group restarts from its volume: no join,
	// no new group, and it serves again.
	p := pods[0]
	c.stop(p)
	c.start(p)
	c.eventually(p.name+" restarted, ready", func() error { return c.ready(p, "") })
	if !bytes.Contains(c.log(p), []byte("joined before")) {
		c.dump()
		t.Fatalf("%s: its log does not say it joined before", p.name)
	}
	serve("onprem.again")
}

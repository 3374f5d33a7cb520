package deploy

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestChartRuns runs the chart's default rendering, accepting self-hosted
// shards (selfHostedShards), without Kubernetes (fakeCluster): every pod
// of every StatefulSet and Deployment, all started at once, as
// podManagementPolicy Parallel starts them; then every readiness probe
// must pass, and a tenant made with control-0's operator key enqueues
// through one gateway pod and works the job through the other. Then a
// self-hosted shard cluster rendered from values-selfhosted-shard.yaml
// joins it (selfHostedRuns), and pod 0 of each hosted group comes back
// with an empty volume and joins its group.
func TestChartRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts 14 processes")
	}
	c := newFakeCluster(t)
	const ns = "jobs"
	for _, name := range []string{"jobbie-ca", "jobbie-selfhosted-ca"} { // the Secrets the operator makes
		if out, err := exec.Command(c.jobbie, "certs", "ca", "--dir", filepath.Dir(c.secretFile(ns, name, "x"))).CombinedOutput(); err != nil {
			t.Fatalf("jobbie certs ca: %v\n%s", err, out)
		}
	}
	o := render(t, values(t, nil, map[string]any{
		"selfHostedShards.enabled":      true,
		"selfHostedShards.tunnelURL":    "prod-jobbie-tunnel." + ns + ".svc:8443",
		"selfHostedShards.controlHosts": []any{"prod-jobbie-control-join." + ns + ".svc"},
	}))
	pods := c.install(o, ns)
	for _, p := range pods {
		c.initPod(p)
	}
	for _, p := range pods { // all at once
		c.start(p)
	}
	caFile := c.secretFile(ns, "jobbie-ca", "ca.crt")
	took := c.waitReady(pods, caFile, 150*time.Second)
	t.Logf("all %d pods ready after %s", len(pods), took.Round(100*time.Millisecond))
	// Each group was started by its pod 0, which its other pods joined.
	sts := sortedKeys(o.statefulSets)
	for _, n := range sts {
		for i := 0; i < int(*o.statefulSets[n].Spec.Replicas); i++ {
			p := c.pod(fmt.Sprintf("%s-%d", n, i))
			want := "ready peers"
			if i == 0 {
				want = "ordinal 0 and no peer ready"
			}
			c.logSays(p, want)
		}
	}

	// A tenant through control's Service, a job through one gateway pod,
	// worked through the other.
	ctl := c.pod("prod-jobbie-control-0")
	opKey, err := os.ReadFile(filepath.Join(ctl.mounts["data"], "operator.key"))
	if err != nil {
		c.dump()
		t.Fatalf("control-0's operator key: %v", err)
	}
	var tenant struct {
		OwnerKey string `json:"owner_key"`
	}
	c.eventually("create a tenant through control's Service", func() error {
		return try(caClient(t, caFile), "POST", "https://"+c.hosts["prod-jobbie-control."+ns+".svc"]+":8081/control/v1/tenants",
			strings.TrimSpace(string(opKey)), `{"name":"acme"}`, &tenant)
	})
	var gws []string
	for _, p := range pods {
		if strings.Contains(p.name, "-gateway-") {
			gws = append(gws, p.ip)
		}
	}
	if len(gws) != 2 {
		t.Fatalf("%d gateway pods", len(gws))
	}
	var enq, job struct {
		JobID string `json:"job_id"`
	}
	c.eventually("enqueue through the first gateway", func() error {
		return try(http.DefaultClient, "POST", "http://"+gws[0]+":8080/api/v1/enqueue", tenant.OwnerKey, `{"queue":"chart.check","payload":{}}`, &enq)
	})
	call(t, http.DefaultClient, "POST", "http://"+gws[1]+":8080/api/v1/fetch", tenant.OwnerKey,
		`{"queues":["chart.check"],"worker_id":"w1","timeout":10,"lease_duration":60}`, &job)
	if job.JobID != enq.JobID {
		t.Fatalf("the second gateway fetched %q, want %s", job.JobID, enq.JobID)
	}
	call(t, http.DefaultClient, "POST", "http://"+gws[1]+":8080/api/v1/ack/"+job.JobID, tenant.OwnerKey, `{}`, nil)

	selfHostedRuns(t, c, ns, tenant.OwnerKey)

	// Pod 0 of a shard cluster and of control comes back with an empty
	// volume: each joins the group its peers hold, and serves.
	for _, n := range sts {
		p := c.pod(n + "-0")
		c.stop(p)
		if err := os.RemoveAll(filepath.Join(p.mounts["data"], "data")); err != nil {
			t.Fatal(err)
		}
		c.start(p)
		c.eventually(p.name+" back with an empty volume, ready", func() error { return c.ready(p, caFile) })
		b := c.log(p)
		if !bytes.Contains(b, []byte("ready peers")) || bytes.Contains(b, []byte("ordinal 0 and no peer ready")) {
			c.dump()
			t.Fatalf("%s came back with an empty volume and did not join its peers", p.name)
		}
	}
	// The job's history is still there, through both gateways.
	for _, gw := range gws {
		c.eventually("read the job through "+gw, func() error {
			return try(http.DefaultClient, "GET", "http://"+gw+":8080/api/v1/jobs/"+job.JobID, tenant.OwnerKey, "", nil)
		})
	}
}

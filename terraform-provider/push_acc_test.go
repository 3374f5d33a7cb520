package provider_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/jobbie/jobbie/client"
)

// receiverCert is the certificate of the handlers the push tests start on
// 127.0.0.1; jobbie dev trusts it (its SSL_CERT_FILE) and may push to
// loopback (--push-allow-private).
var receiverCert tls.Certificate

// writeReceiverCert makes receiverCert, self-signed for 127.0.0.1, and
// writes it to a PEM file in dir for jobbie dev's SSL_CERT_FILE.
func writeReceiverCert(dir string) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "push receiver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", err
	}
	receiverCert = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	path := filepath.Join(dir, "receiver.pem")
	return path, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
}

// startReceiver serves h over TLS on 127.0.0.1 until the test ends.
func startReceiver(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{receiverCert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// TestAccQueuePush: a push block makes a push queue and its changes update
// it in place; a handler's 410 shows as push.disabled on the next refresh,
// plans no change by itself, and the next apply that changes the queue
// enables push again; removing the block makes a pull queue. Bad values are refused at plan time or by the API, on the
// attribute.
func TestAccQueuePush(t *testing.T) {
	ns := accNamespace(t, "push")
	const addr = "jobbie_queue.hooks"
	// The handler is gone once, then back: the job delivered again once
	// push is enabled again completes.
	var calls atomic.Int64
	recv := startReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusGone)
		}
	})
	url := recv.URL + "/jobs"
	queue := func(push string) string {
		return providerBlock(ns) + fmt.Sprintf(`
resource "jobbie_queue" "hooks" {
  name          = "hooks"
  concurrency   = 4
  force_destroy = true
  %s
}
`, push)
	}
	first := queue(fmt.Sprintf(`push = {
    url     = %q
    headers = { Authorization = "Bearer s3cret" }
  }`, url))
	changed := queue(fmt.Sprintf(`push = {
    url           = %q
    mode          = "when_no_workers"
    timeout       = "60s"
    max_in_flight = 3
  }`, url))
	again := queue(fmt.Sprintf(`push = {
    url           = %q
    mode          = "when_no_workers"
    timeout       = "60s"
    max_in_flight = 2
  }`, url))
	held := func(check func(q *client.Queue) error) resource.TestCheckFunc {
		return func(*terraform.State) error {
			q, err := api().WithNamespace(ns).GetQueue(ctx(t), "hooks")
			if err != nil {
				return err
			}
			if err := check(q); err != nil {
				b, _ := json.Marshal(q.Push)
				return fmt.Errorf("%v; the API holds push %s", err, b)
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             queueGone(ns, "hooks"),
		Steps: []resource.TestStep{
			{
				Config:      queue(`push = { url = "http://127.0.0.1:8443/jobs" }`),
				ExpectError: regexp.MustCompile(`must be an https URL`),
			},
			{
				Config:      queue(`push = { url = "https://127.0.0.1:8443/jobs", headers = { Webhook-Id = "x" } }`),
				ExpectError: regexp.MustCompile(`(?s)push\.headers.*Webhook-Id is set by Jobbie`),
			},
			{
				Config: first,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "push.url", url),
					resource.TestCheckResourceAttr(addr, "push.mode", "always"),
					resource.TestCheckResourceAttr(addr, "push.timeout", "30s"),
					resource.TestCheckResourceAttr(addr, "push.max_in_flight", "10"),
					resource.TestCheckResourceAttr(addr, "push.headers.Authorization", "Bearer s3cret"),
					resource.TestCheckNoResourceAttr(addr, "push.disabled"),
					held(func(q *client.Queue) error {
						if p := q.Push; p == nil || p.URL != url || p.Mode != "always" || p.Headers["Authorization"] != "Bearer s3cret" ||
							q.Concurrency == nil || *q.Concurrency != 4 {
							return fmt.Errorf("not the declared push queue")
						}
						return nil
					}),
				),
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     ns + "/hooks",
				ImportStateVerify: true,
				// Only Terraform knows force_destroy; an import says false.
				ImportStateVerifyIgnore: []string{"force_destroy"},
			},
			{ // in place; the headers removed
				Config: changed,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "push.mode", "when_no_workers"),
					resource.TestCheckResourceAttr(addr, "push.timeout", "60s"),
					resource.TestCheckNoResourceAttr(addr, "push.headers.Authorization"),
					held(func(q *client.Queue) error {
						if p := q.Push; p == nil || p.Mode != "when_no_workers" || p.Timeout != "1m" || p.MaxInFlight != 3 || len(p.Headers) != 0 {
							return fmt.Errorf("not the changed push settings")
						}
						return nil
					}),
				),
			},
			{ // 60s and 1m are the same
				Config:   queue(fmt.Sprintf(`push = { url = %q, mode = "when_no_workers", timeout = "1m", max_in_flight = 3 }`, url)),
				PlanOnly: true,
			},
			{ // a job pushed to a handler that answers 410: push disabled, which plans no change by itself
				PreConfig: func() {
					if _, err := api().WithNamespace(ns).Enqueue(ctx(t), client.EnqueueRequest{Queue: "hooks", Payload: json.RawMessage(`{}`)}); err != nil {
						t.Fatal(err)
					}
					waitFor(t, "push disabled by the 410", func() bool {
						q, err := api().WithNamespace(ns).GetQueue(ctx(t), "hooks")
						return err == nil && q.Push != nil && q.Push.Disabled != nil
					})
				},
				Config:   changed,
				PlanOnly: true,
			},
			{ // the state shows why
				RefreshState: true,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestMatchResourceAttr(addr, "push.disabled.reason", regexp.MustCompile(`410`)),
					resource.TestMatchResourceAttr(addr, "push.disabled.at", regexp.MustCompile(`^20\d\d-\d\d-\d\dT`)),
				),
			},
			{ // the next apply that changes the queue enables push again
				Config: again,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckNoResourceAttr(addr, "push.disabled.reason"),
					resource.TestCheckResourceAttr(addr, "push.max_in_flight", "2"),
					held(func(q *client.Queue) error {
						if q.Push == nil || q.Push.Disabled != nil || q.Push.MaxInFlight != 2 {
							return fmt.Errorf("push not enabled again")
						}
						return nil
					}),
				),
			},
			{ // the block removed: a pull queue
				Config: queue(""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckNoResourceAttr(addr, "push.url"),
					held(func(q *client.Queue) error {
						if q.Push != nil || q.Concurrency == nil || *q.Concurrency != 4 {
							return fmt.Errorf("not a pull queue with its concurrency")
						}
						return nil
					}),
				),
			},
		},
	})
	if calls.Load() == 0 {
		t.Error("the handler was never called")
	}
}

// waitFor polls cond until it holds, for at most a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAccSigningKeysDataSource: the namespace's public keys, and both
// keys with the older one's not_after after a rotation; the queue data
// source shows a queue's push.
func TestAccSigningKeysDataSource(t *testing.T) {
	ns := accNamespace(t, "sigkeys")
	const addr = "data.jobbie_signing_keys.k"
	cfg := providerBlock(ns) + `
data "jobbie_signing_keys" "k" {}
resource "jobbie_queue" "q" {
  name = "pushed"
  push = { url = "https://127.0.0.1:8443/jobs", max_in_flight = 5 }
}
data "jobbie_queue" "q" {
  name       = jobbie_queue.q.name
}
`
	var firstKey string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy:             queueGone(ns, "pushed"),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "namespace", ns),
					resource.TestCheckResourceAttr(addr, "keys.#", "1"),
					resource.TestCheckResourceAttr(addr, "keys.0.scheme", "v1a"),
					resource.TestMatchResourceAttr(addr, "keys.0.public_key", regexp.MustCompile(`^whpk_`)),
					resource.TestCheckNoResourceAttr(addr, "keys.0.not_after"),
					resource.TestCheckResourceAttrPair(addr, "public_keys.0", addr, "keys.0.public_key"),
					resource.TestCheckResourceAttr("data.jobbie_queue.q", "push.url", "https://127.0.0.1:8443/jobs"),
					resource.TestCheckResourceAttr("data.jobbie_queue.q", "push.max_in_flight", "5"),
					func(s *terraform.State) error {
						firstKey = s.RootModule().Resources[addr].Primary.Attributes["keys.0.public_key"]
						keys, err := api().WithNamespace(ns).WebhookSigningKeys(ctx(t))
						if err != nil {
							return err
						}
						if len(keys) != 1 || keys[0].Key != firstKey {
							return fmt.Errorf("the API holds %+v", keys)
						}
						_, err = client.NewWebhookVerifier(firstKey)
						return err
					},
				),
			},
			{
				PreConfig: func() {
					if _, err := api().WithNamespace(ns).RotateWebhookSigningKeys(ctx(t)); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(addr, "keys.#", "2"),
					resource.TestCheckResourceAttr(addr, "public_keys.#", "2"),
					resource.TestMatchResourceAttr(addr, "keys.0.not_after", regexp.MustCompile(`^20\d\d-`)),
					resource.TestCheckNoResourceAttr(addr, "keys.1.not_after"),
					func(s *terraform.State) error {
						if got := s.RootModule().Resources[addr].Primary.Attributes["keys.0.public_key"]; got != firstKey {
							return fmt.Errorf("the older key %s is not first: %s", firstKey, got)
						}
						return nil
					},
				),
			},
		},
	})
}

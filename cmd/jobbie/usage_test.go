package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/cmd/jobbie/internal/cli/clitest"
	"github.com/jobbie/jobbie/tenancy"
	"github.com/jobbie/jobbie/wire"
)

// devServer is `jobbie dev` run in process on free ports and a data
// directory of its own.
type devServer struct {
	dir, gateway, control string // gateway and control as URLs
	grpc                  string // with --grpc-addr: its URL (h2c)
}

// welcomeWriter signals once dev has printed its welcome.
type welcomeWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	once  sync.Once
}

func (w *welcomeWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), "Try it:") {
		w.once.Do(func() { close(w.ready) })
	}
	return len(p), nil
}

func startDev(t *testing.T) *devServer {
	t.Helper()
	return startDevIn(t, t.TempDir())
}

// startDevIn runs jobbie dev on data directory dir, with the flags extra,
// until the test ends.
func startDevIn(t *testing.T, dir string, extra ...string) *devServer {
	t.Helper()
	d, stop := runDev(t, dir, extra...)
	t.Cleanup(func() { require.NoError(t, stop()) })
	return d
}

// runDev runs jobbie dev on data directory dir, with the flags extra,
// until stop (which may be called more than once) stops it.
func runDev(t *testing.T, dir string, extra ...string) (*devServer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &welcomeWriter{ready: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetArgs(append([]string{"dev", "--data-dir", dir, "--addr", "127.0.0.1:0", "--control-addr", "127.0.0.1:0",
			"--shard-addr", "127.0.0.1:0"}, extra...))
		root.SetOut(out)
		done <- root.ExecuteContext(ctx)
	}()
	var once sync.Once
	var stopErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			stopErr = <-done
		})
		return stopErr
	}
	t.Cleanup(func() { _ = stop() }) // also when it never became ready
	select {
	case <-out.ready:
	case err := <-done:
		done <- err
		t.Fatalf("jobbie dev stopped before it was ready: %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("jobbie dev was not ready within 90 s")
	}
	out.mu.Lock()
	welcome := out.buf.String()
	out.mu.Unlock()
	gw := regexp.MustCompile(`gateway \(public API\): +(http://\S+)`).FindStringSubmatch(welcome)
	ctl := regexp.MustCompile(`control plane: +(https://\S+)`).FindStringSubmatch(welcome)
	require.NotNil(t, gw, welcome)
	require.NotNil(t, ctl, welcome)
	d := &devServer{dir: dir, gateway: gw[1], control: ctl[1]}
	if m := regexp.MustCompile(`gRPC and Connect: +(http://\S+)`).FindStringSubmatch(welcome); m != nil {
		d.grpc = m[1]
	}
	return d, stop
}

// operator runs an operator command against dev's control plane.
func (d *devServer) operator(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, _, err := runJobbie(t, stdin, append(args, "--control", d.control,
		"--operator-key-file", filepath.Join(d.dir, "operator.key"), "--ca", filepath.Join(d.dir, "pki", "ca.crt"))...)
	require.NoError(t, err)
	return out
}

// The usage, plan and invoices commands against jobbie dev: a tenant on
// a priced plan runs a job; its billing key reads the job's usage as a
// table and as JSON, the plan with its prices, and the month's invoice
// pricing the execution, as JSON, a table and CSV; a viewer key gets the
// gateway's 403 as a clear error.
func TestUsagePlanAndInvoicesAgainstDev(t *testing.T) {
	t.Parallel()
	d := startDev(t)
	ctx := context.Background()

	d.operator(t, `{"name":"metered","currency":"EUR","prices":{"executions":{"unit":1,"price":7}},
		"included":{"jobs_enqueued":100},"limits":{"max_keys":10}}`, "plans", "put", "-")
	var ct wire.CreatedTenant
	require.NoError(t, json.Unmarshal([]byte(d.operator(t, "", "tenants", "create", "acme", "--plan", "metered", "-o", "json")), &ct))
	owner := client.New(d.gateway, ct.OwnerKey)
	t.Cleanup(owner.CloseIdleConnections)
	billing, err := owner.CreateKey(ctx, client.CreateKeyRequest{Name: "accounts", Role: tenancy.RoleBilling, Namespaces: []string{tenancy.AllNamespaces}})
	require.NoError(t, err)
	viewer, err := owner.CreateKey(ctx, client.CreateKeyRequest{Name: "dashboards", Role: tenancy.RoleViewer, Namespaces: []string{tenancy.AllNamespaces}})
	require.NoError(t, err)

	// One job, run to completion: one enqueue, one execution, one completion.
	_, err = owner.Enqueue(ctx, client.EnqueueRequest{Queue: "reports", Payload: map[string]int{"n": 1}})
	require.NoError(t, err)
	job, err := owner.Fetch(ctx, client.FetchRequest{Queues: []string{"reports"}, Timeout: 10 * time.Second})
	require.NoError(t, err)
	require.NotNil(t, job)
	require.NoError(t, owner.Ack(ctx, job.ID, nil))

	bill := client.New(d.gateway, billing.Token)
	t.Cleanup(bill.CloseIdleConnections)
	// Control pulls the shard's meters every 2 s, and the gateway pushes
	// its api request counts every 5 s: wait until both show.
	deadline := time.Now().Add(60 * time.Second)
	for {
		u, err := bill.GetUsage(ctx, client.UsageQuery{})
		require.NoError(t, err)
		if u.Totals.JobsCompleted == 1 && u.Totals.APIRequests > 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the completed job's usage never showed: %+v", u.Totals)
		time.Sleep(200 * time.Millisecond)
	}

	billingFile := clitest.KeyFile(t, billing.Token)
	run := func(key string, args ...string) (string, error) {
		out, _, err := runJobbie(t, "", append(args, "--url", d.gateway, "--key-file", key)...)
		return out, err
	}

	t.Run("UsageJSON", func(t *testing.T) {
		out, err := run(billingFile, "usage", "-o", "json")
		require.NoError(t, err)
		var u wire.Usage
		require.NoError(t, json.Unmarshal([]byte(out), &u))
		require.Equal(t, "hour", u.Granularity)
		require.Len(t, u.Namespaces, 1)
		require.Equal(t, ct.Namespace, u.Namespaces[0].Namespace)
		tot := u.Namespaces[0].Totals
		require.Equal(t, [4]int64{1, 1, 1, 0}, [4]int64{tot.JobsEnqueued, tot.Executions, tot.JobsCompleted, tot.JobsFailed})
		require.Len(t, u.Tenant, 24, "the last 24 hours, the current one included")
		require.True(t, u.Tenant[len(u.Tenant)-1].Incomplete, "the running hour is open")
		require.Positive(t, u.Totals.APIRequests)
	})

	t.Run("UsageTable", func(t *testing.T) {
		out, err := run(billingFile, "usage")
		require.NoError(t, err)
		rows := clitest.TableRows(out)
		require.Equal(t, []string{"NAMESPACE", "PERIOD", "ENQUEUED", "EXECUTIONS", "COMPLETED", "FAILED", "DEAD", "ACTIVE", "SECONDS",
			"STORAGE", "BYTE-HOURS", "API", "REQUESTS", "PUSH", "DELIVERIES", "WEBHOOK", "DELIVERIES", "INCOMPLETE"}, rows["NAMESPACE PERIOD"], out)
		total := rows[ct.Namespace+" total"]
		require.NotNil(t, total, out)
		require.Equal(t, []string{"1", "1", "1", "0", "0"}, total[2:7], out)
		require.Equal(t, []string{"-", "0", "0", "-"}, total[9:], "a namespace has no api requests of its own, no deliveries here, and a total is not a period")
		tenant := rows["(tenant) total"]
		require.NotNil(t, tenant, out)
		require.Equal(t, []string{"1", "1", "1"}, tenant[2:5], out)
		require.NotEqual(t, "0", tenant[9], "the tenant's api requests: %s", out)
		// The job's hour (two, should it have run across the turn of one).
		var enqueued, executed int
		for _, f := range clitest.TableLines(out) {
			if f[0] == ct.Namespace && f[1] != "total" {
				require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:00Z$`, f[1])
				enqueued += atoi(t, f[2])
				executed += atoi(t, f[3])
			}
		}
		require.Equal(t, [2]int{1, 1}, [2]int{enqueued, executed}, out)
		tenantRows := 0
		for _, f := range clitest.TableLines(out) {
			if f[0] == "(tenant)" {
				tenantRows++
			}
		}
		require.LessOrEqual(t, tenantRows, 3, "of the tenant's 24 hours, those that used something and the total: %s", out)
		require.Contains(t, out, "incomplete (may still grow): ")
		require.Contains(t, out, time.Now().UTC().Truncate(time.Hour).Format("2006-01-02T15:04Z"))
	})

	t.Run("UsageOfOneNamespacePerDay", func(t *testing.T) {
		out, err := run(billingFile, "usage", "--granularity", "day", "--namespace", ct.Namespace, "--from", time.Now().UTC().Format(time.DateOnly))
		require.NoError(t, err)
		require.Contains(t, out, ", per day (UTC)")
		rows := clitest.TableRows(out)
		today := rows[ct.Namespace+" "+time.Now().UTC().Format(time.DateOnly)]
		if today == nil { // the day turned between the job and now
			today = rows[ct.Namespace+" total"]
		}
		require.Equal(t, []string{"1", "1", "1"}, today[2:5], out)
		require.Equal(t, "-", rows["(tenant) total"][9], "an answer about one namespace has no api requests: %s", out)
	})

	t.Run("UsageBadInput", func(t *testing.T) {
		_, err := run(billingFile, "usage", "--granularity", "week")
		require.ErrorContains(t, err, "400 bad_request")
		require.ErrorContains(t, err, "(field granularity)")
		_, err = run(billingFile, "usage", "--from", "yesterday")
		require.ErrorContains(t, err, "--from")
		_, err = run(billingFile, "usage", "-o", "xml")
		require.ErrorContains(t, err, "--output must be table, json or yaml")
	})

	t.Run("Plan", func(t *testing.T) {
		out, err := run(billingFile, "plan", "-o", "json")
		require.NoError(t, err)
		var tp wire.TenantPlan
		require.NoError(t, json.Unmarshal([]byte(out), &tp))
		require.Equal(t, ct.Tenant.ID, tp.TenantID)
		require.Equal(t, "metered", tp.Plan.Name)
		require.Equal(t, wire.Price{Unit: 1, Price: 7}, tp.Plan.Prices["executions"])

		out, err = run(billingFile, "plan")
		require.NoError(t, err)
		require.Contains(t, out, "tenant "+ct.Tenant.ID+": plan metered (version 1, EUR) since ")
		rows := clitest.TableRows(out)
		require.Equal(t, []string{"executions", "7", "1", "-"}, rows["executions 7"], out)
		require.Equal(t, []string{"jobs_enqueued", "-", "-", "100"}, rows["jobs_enqueued -"], out)
		require.Contains(t, out, "limits: max_keys 10\n")
		require.Contains(t, out, "event log kept: 24 h, at most 100000 events per namespace\n", "the defaults of a plan that sets none")
	})

	month := time.Now().UTC().Format("2006-01")
	invID := "inv_" + ct.Tenant.ID + "_" + month
	t.Run("Invoices", func(t *testing.T) {
		out, err := run(billingFile, "invoices", "list", "-o", "json")
		require.NoError(t, err)
		var list []wire.InvoiceSummary
		require.NoError(t, json.Unmarshal([]byte(out), &list))
		require.NotEmpty(t, list)
		if list[0].ID != invID { // the month turned since the job ran
			t.Skipf("the month turned: %s", list[0].ID)
		}
		require.Equal(t, wire.InvoiceOpen, list[0].Status)
		require.Equal(t, int64(7), list[0].Total, "one execution at 7 minor units each")
		out, err = run(billingFile, "invoices", "list")
		require.NoError(t, err)
		require.Equal(t, []string{invID, month, "open", "7", "EUR"}, clitest.TableRows(out)[invID+" "+month], out)

		out, err = run(billingFile, "invoices", "get", invID, "-o", "json")
		require.NoError(t, err)
		var inv wire.Invoice
		require.NoError(t, json.Unmarshal([]byte(out), &inv))
		require.Equal(t, invID, inv.ID)
		require.Equal(t, int64(7), inv.Total)
		var exec *wire.InvoiceLine
		for i, l := range inv.Lines {
			if l.Meter == "executions" {
				exec = &inv.Lines[i]
			}
		}
		require.NotNil(t, exec, out)
		require.Equal(t, "1", exec.Quantity.String())
		require.Equal(t, int64(7), exec.Amount)

		out, err = run(billingFile, "invoices", "upcoming", "-o", "json")
		require.NoError(t, err)
		var up wire.Invoice
		require.NoError(t, json.Unmarshal([]byte(out), &up))
		require.Equal(t, invID, up.ID)

		out, err = run(billingFile, "invoices", "get", invID)
		require.NoError(t, err)
		require.Contains(t, out, "invoice "+invID+" (open), tenant "+ct.Tenant.ID)
		require.Contains(t, clitest.TableLines(out), []string{"metered", "v1", "executions", ct.Namespace, "1", exec.QuantityUnit, "0", "1", "7", "1", "1", "7"}, out)
		require.Contains(t, out, "subtotal 7, total 7 EUR\n")

		out, err = run(billingFile, "invoices", "csv", invID)
		require.NoError(t, err)
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		require.NoError(t, err)
		require.Equal(t, wire.InvoiceCSVHeader, recs[0])
		require.Len(t, recs, 1+len(inv.Lines))
		file := filepath.Join(t.TempDir(), month+".csv")
		_, _, err = runJobbie(t, "", "invoices", "csv", invID, "--out", file, "--url", d.gateway, "--key-file", billingFile)
		require.NoError(t, err)
		got, err := os.ReadFile(file)
		require.NoError(t, err)
		require.Equal(t, out, string(got))
		_, err = run(billingFile, "invoices", "csv", invID, "-o", "json")
		require.ErrorContains(t, err, "--output json does not apply")

		_, err = run(billingFile, "invoices", "get", "not-an-invoice")
		require.ErrorContains(t, err, "(field id)")
		_, err = run(billingFile, "invoices", "get", "inv_t_someoneelse_"+month)
		require.ErrorContains(t, err, "404 not_found")
	})

	t.Run("ViewerIsRefused", func(t *testing.T) {
		viewerFile := clitest.KeyFile(t, viewer.Token)
		for _, args := range [][]string{{"usage"}, {"plan"}, {"invoices", "list"}, {"invoices", "upcoming"}, {"invoices", "get", invID}, {"invoices", "csv", invID}} {
			out, err := run(viewerFile, args...)
			require.Error(t, err, "%v", args)
			require.Empty(t, out, "%v", args)
			require.True(t, client.IsForbidden(err), "%v: %v", args, err)
			require.Regexp(t, `^403 forbidden: .+ \(usage, the plan and invoices need a key with usage\.read: owner, admin or billing\)$`, err.Error())
		}
	})
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

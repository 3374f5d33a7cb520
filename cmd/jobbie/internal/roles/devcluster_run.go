package roles

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/jobbie/jobbie/client"
)

// Running a dev cluster's processes: cluster.json kept current, each
// process supervised, and the waits until the cluster is ready.

// save writes cluster.json whole, by rename, so a reader never sees half.
func (c *devCluster) save() error {
	c.cf.UpdatedAt = time.Now().UTC()
	raw, err := json.MarshalIndent(&c.cf, "", "  ")
	if err != nil {
		return err
	}
	tmp := c.path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, c.path)
}

func (c *devCluster) update(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
	_ = c.save()
}

// supervise runs p until stop, restarting it a second after it dies.
func (c *devCluster) supervise(p *devProc, stop <-chan struct{}) {
	for {
		logf, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return
		}
		cmd := exec.Command(c.bin, p.args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		c.ports.release(p.HTTP, p.Gossip, p.Raft, p.Pprof)
		// Ctrl-C reaches dev, which stops them in order; if dev itself is killed,
		// the kernel tells them to stop.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
		if err := cmd.Start(); err != nil {
			logf.Close()
			return
		}
		c.update(func() { p.PID, p.Status = cmd.Process.Pid, "running" })
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-stop:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
			logf.Close()
			c.update(func() { p.PID, p.Status = 0, "exited" })
			return
		case <-done:
		}
		logf.Close()
		c.update(func() { p.PID, p.Status = 0, "exited" })
		select {
		case <-stop:
			return
		case <-time.After(time.Second):
		}
		c.update(func() { p.Restarts++ })
	}
}

// waitShards waits until every shard cluster registered with control, so
// the default namespace is placed on a registered shard.
func (c *devCluster) waitShards(ctx context.Context) error {
	op, err := c.operator()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		shards, err := op.ListShardLoads(callCtx)
		cancel()
		if err == nil && len(shards) >= c.o.shards {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("shards did not register with control within a minute (%d registered, err %v)", len(shards), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// operator is a client of control's operator API with the operator key
// and certificate.
func (c *devCluster) operator() (*client.Client, error) {
	key, err := os.ReadFile(c.files.operator)
	if err != nil {
		return nil, fmt.Errorf("operator key: %w", err)
	}
	return client.New("https://"+c.cf.Control, strings.TrimSpace(string(key)), client.WithHTTPClient(c.hc)), nil
}

// bootstrapTenant creates tenant "default" and owner.key on first start.
func (c *devCluster) bootstrapTenant(ctx context.Context) error {
	if exists(c.files.owner) {
		return nil
	}
	op, err := c.operator()
	if err != nil {
		return err
	}
	t, err := op.CreateTenant(ctx, "default")
	if err != nil {
		return fmt.Errorf("create tenant default: %w (owner.key is missing: if the tenant exists, start with a fresh --data-dir)", err)
	}
	return writeSecretFile(c.files.owner, t.OwnerKey)
}

// waitHTTP polls url until it answers 200.
func (c *devCluster) waitHTTP(ctx context.Context, url string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		status, err := c.get(ctx, url)
		if err == nil && status == 200 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %s (status %d, err %v)", url, within, status, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// get is the status of a GET of url.
func (c *devCluster) get(ctx context.Context, url string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, err = io.Copy(io.Discard, res.Body)
	return res.StatusCode, err
}

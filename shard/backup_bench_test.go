package shard

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jobbie/jobbie/internal/backup"
	"github.com/jobbie/jobbie/internal/pki"
	"github.com/jobbie/jobbie/internal/pki/pkitest"
	"github.com/jobbie/jobbie/wire"
)

// BenchmarkBackupMillion (JOBBIE_BACKUP_MILLION=1) times a backup of a
// namespace of a million jobs (the state BenchmarkSearchMillion builds:
// half completed, a tenth dead, 5% scheduled, the rest pending, small
// payloads and a tag each) through a real node's GET /internal/v1/backup
// with control's certificate into a file, then its restore into a new
// namespace through POST /internal/v1/restore (Raft, durable).
func BenchmarkBackupMillion(b *testing.B) {
	if os.Getenv("JOBBIE_BACKUP_MILLION") == "" {
		b.Skip("set JOBBIE_BACKUP_MILLION=1: it builds a million jobs first (about a minute)")
	}
	dir := b.TempDir()
	start := time.Now()
	buildMillion(b, filepath.Join(dir, "state"), 1_000_000)
	b.Logf("built 1,000,000 jobs in %s", time.Since(start).Round(time.Second))

	n := openBenchNode(b, dir, true)
	defer n.Stop()
	c := client(b, pkitest.Control, pki.ShardMember("s1"))
	url := "https://" + n.Addr()
	file := filepath.Join(dir, "million.jbk")

	b.Run("backup", func(b *testing.B) {
		for b.Loop() {
			start := time.Now()
			req, _ := http.NewRequest("GET", url+"/internal/v1/backup", nil)
			req.Header.Set(wire.ShardNamespaceHeader, testNS)
			resp, err := c.Do(req)
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("backup: %v %v", err, resp)
			}
			f, _ := os.Create(file)
			size, err := io.Copy(f, resp.Body)
			resp.Body.Close()
			f.Close()
			if err != nil {
				b.Fatal(err)
			}
			took := time.Since(start)
			m := verify(b, file)
			b.ReportMetric(float64(m.Counts["jobs"]), "jobs")
			b.ReportMetric(float64(size)/(1<<20), "MiB")
			b.Logf("backup of %d records (%d jobs), %d MiB compressed, in %s", m.Records, m.Counts["jobs"], size>>20, took.Round(time.Millisecond))
		}
	})
	b.Run("restore", func(b *testing.B) {
		if b.N > 1 {
			b.Skip("runs once: a second restore into the namespace is a conflict")
		}
		start := time.Now()
		f, _ := os.Open(file)
		defer f.Close()
		req, _ := http.NewRequest("POST", url+"/internal/v1/restore?mode=new", f)
		req.Header.Set(wire.ShardNamespaceHeader, restoredNS)
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			b.Fatalf("restore: %d %s", resp.StatusCode, raw)
		}
		var res wire.RestoreResult
		if err := json.Unmarshal(raw, &res); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Jobs), "jobs")
		b.Logf("restore of %d records (%d jobs) in %s", res.Records, res.Jobs, time.Since(start).Round(time.Millisecond))
	})
}

// verify reads a backup file to its verified end and returns its manifest.
func verify(b *testing.B, path string) backup.Manifest {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r, err := backup.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			b.Fatal(err)
		}
	}
	m, err := r.Manifest()
	if err != nil {
		b.Fatal(err)
	}
	return m
}

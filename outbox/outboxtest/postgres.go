// Package outboxtest runs a real PostgreSQL server for the outbox's
// tests: Debian's server package (scripts/install-postgres.sh installs
// it), initdb into a temporary directory, postgres on a free 127.0.0.1
// port, as the unprivileged user nobody when the tests run as root
// (PostgreSQL refuses to run as root). One server per test binary (start
// it in TestMain); each test takes a database of its own.
package outboxtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// Postgres is a running server.
type Postgres struct {
	dir, bin string
	port     int
	cmd      *exec.Cmd
	exited   chan struct{}
	asUID    *syscall.Credential // nil when not root
	next     atomic.Int64
}

// Bin is the directory of Debian's PostgreSQL binaries (the newest
// /usr/lib/postgresql/<version>/bin), or $JOBBIE_PG_BIN.
func Bin() (string, error) {
	if b := os.Getenv("JOBBIE_PG_BIN"); b != "" {
		return b, nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		return "", errors.New("no PostgreSQL server: run scripts/install-postgres.sh (make outbox-test does), or set JOBBIE_PG_BIN")
	}
	sort.Slice(found, func(i, j int) bool { return version(found[i]) < version(found[j]) })
	return filepath.Dir(found[len(found)-1]), nil
}

func version(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// StartPostgres makes a data directory and starts a server on it; Stop
// ends it and removes the directory.
func StartPostgres() (*Postgres, error) {
	bin, err := Bin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "jobbie-pg-")
	if err != nil {
		return nil, err
	}
	p := &Postgres{dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		if p.asUID, err = nobody(); err != nil {
			return nil, err
		}
		// nobody must reach its data directory through this one.
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, err
		}
	}
	data := p.data()
	if err := os.Mkdir(data, 0o700); err != nil {
		return nil, err
	}
	if p.asUID != nil {
		if err := os.Chown(data, int(p.asUID.Uid), int(p.asUID.Gid)); err != nil {
			return nil, err
		}
	}
	initdb := p.command("initdb", "-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		p.cleanup()
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	if p.port, err = freePort(); err != nil {
		p.cleanup()
		return nil, err
	}
	if err := p.Start(); err != nil {
		p.cleanup()
		return nil, err
	}
	return p, nil
}

func nobody() (*syscall.Credential, error) {
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("postgres refuses root and there is no user nobody: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

func (p *Postgres) data() string { return filepath.Join(p.dir, "data") }

// command is one of the server's binaries, run as nobody under root.
func (p *Postgres) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(p.bin, name), args...)
	cmd.Dir = p.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.asUID, Setpgid: true}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd
}

// Start starts the server on its data directory and port (again, after
// Stop or Kill) and waits until it takes connections.
func (p *Postgres) Start() error {
	logf, err := os.OpenFile(filepath.Join(p.dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := p.command("postgres", "-D", p.data(), "-h", "127.0.0.1", "-p", strconv.Itoa(p.port),
		"-k", "", "-c", "fsync=off", "-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	p.cmd, p.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}(p.exited)
	db, err := sql.Open("pgx", p.DSN("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("postgres exited; see %s", filepath.Join(p.dir, "postgres.log"))
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready after 60 s: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Down stops the server (a fast shutdown: its connections are cut) and
// keeps its data; Start starts it again.
func (p *Postgres) Down() { p.stop(syscall.SIGINT) }

// Restart stops the server (a fast shutdown: its connections are cut)
// and starts it again on the same port and data.
func (p *Postgres) Restart() error {
	p.stop(syscall.SIGINT)
	return p.Start()
}

func (p *Postgres) stop(sig syscall.Signal) {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	<-p.exited
	p.cmd = nil
}

// Stop ends the server and removes its directory.
func (p *Postgres) Stop() {
	p.stop(syscall.SIGINT)
	p.cleanup()
}

func (p *Postgres) cleanup() { _ = os.RemoveAll(p.dir) }

// DSN is the URL of database name on the server.
func (p *Postgres) DSN(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", p.port, name)
}

// NewDatabase creates a database of its own for t and returns its DSN.
func (p *Postgres) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), p.next.Add(1))
	db, err := sql.Open("pgx", p.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	return p.DSN(name)
}

// freePort is a TCP port of 127.0.0.1 free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

package outbox

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Dialect is the SQL database the outbox table lives in. The queries are
// the same for both but for the claim (PostgreSQL skips rows another
// relay has locked) and the lock taken while migrating.
type Dialect string

const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// check refuses a dialect other than the two.
func (d Dialect) check() error {
	if d != SQLite && d != Postgres {
		return fmt.Errorf("outbox: dialect must be %q or %q, not %q", SQLite, Postgres, d)
	}
	return nil
}

//go:embed migrations
var migrations embed.FS

// Migration is one of the shipped schema changes, in the order Migrate
// applies them.
type Migration struct {
	Version int
	Name    string // its file, e.g. "0001_outbox.sql"
	SQL     string
}

// Migrations lists the shipped migrations of a dialect, for a program
// that applies its schema with its own tool: copy them, in order.
func Migrations(d Dialect) ([]Migration, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	dir := path.Join("migrations", string(d))
	entries, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("outbox: migration %s is not named NNNN_name.sql", e.Name())
		}
		raw, err := fs.ReadFile(migrations, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: e.Name(), SQL: string(raw)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Migrate applies the migrations db has not had yet, each in its own
// transaction with its row in jobbie_outbox_migrations, so it is safe to
// call at every start and from several processes at once (PostgreSQL
// takes an advisory lock; SQLite has one writer).
func Migrate(ctx context.Context, db *sql.DB, d Dialect) error {
	ms, err := Migrations(d)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := apply(ctx, db, d, m); err != nil {
			return fmt.Errorf("outbox: migration %s: %w", m.Name, err)
		}
	}
	return nil
}

// migrateLock is the PostgreSQL advisory lock key Migrate holds while it
// applies a migration ("jobbie outbox" in ASCII, truncated to 63 bits).
const migrateLock = 0x6a6f626269656f62

func apply(ctx context.Context, db *sql.DB, d Dialect, m Migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if d == Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS jobbie_outbox_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return err
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobbie_outbox_migrations WHERE version = $1`, m.Version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO jobbie_outbox_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
		m.Version, m.Name, time.Now().UnixMilli()); err != nil {
		return err
	}
	return tx.Commit()
}

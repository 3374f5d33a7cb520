// Package outbox is the transactional outbox for Go programs that keep
// their data in a SQL database (SQLite or PostgreSQL, through
// database/sql): a job is written into the outbox table in the same
// transaction as the program's own data (Enqueue), so it exists exactly
// when that transaction commits, and a Relay sends the committed rows to
// Jobbie afterwards with the row's id as the enqueue's Idempotency-Key,
// so a row sent again after a crash gets back the job of its first send.
//
// Its one concern is that hand-off from the database to Jobbie: the
// table and its migrations (Migrate), writing a row (Enqueue), relaying
// rows (Relay) and reporting on them (Reconcile). It imports the SDK
// (client), database/sql and ULIDs for row ids, and no database driver:
// the program brings its own (modernc.org/sqlite,
// github.com/jackc/pgx/v5/stdlib). Of this module it imports only client
// (TestImportsNoDriverNorServer). docs/outbox.md says what it guarantees
// and where those guarantees end.
package outbox

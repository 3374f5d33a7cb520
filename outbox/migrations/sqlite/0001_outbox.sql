-- The outbox table (docs/outbox.md). Times are Unix milliseconds.
CREATE TABLE IF NOT EXISTS jobbie_outbox (
    id              TEXT PRIMARY KEY,          -- the enqueue's Idempotency-Key
    queue           TEXT NOT NULL,
    request         TEXT NOT NULL,             -- the job's options (JSON)
    payload         TEXT,                      -- the job's payload (JSON), verbatim
    status          TEXT NOT NULL DEFAULT 'pending', -- pending, sent, refused, expired
    created_at      BIGINT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    maybe_sent_at   BIGINT,                    -- the first claim after which a send of it may have reached Jobbie
    locked_by       TEXT,
    locked_until    BIGINT,
    sent_at         BIGINT,
    job_id          TEXT,
    last_error      TEXT
);
CREATE INDEX IF NOT EXISTS jobbie_outbox_due ON jobbie_outbox (next_attempt_at, created_at) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS jobbie_outbox_sent ON jobbie_outbox (sent_at) WHERE status = 'sent';

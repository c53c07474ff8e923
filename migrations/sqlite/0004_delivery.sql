-- Delivery of the outboxes: webhook attempts with their outcome, leases that let several
-- processes share the work, and e-mail send state.
ALTER TABLE events ADD COLUMN round_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN lease_until INTEGER;
ALTER TABLE events ADD COLUMN delivered_at INTEGER;

CREATE TABLE event_attempts (
    id              INTEGER PRIMARY KEY,
    event_id        INTEGER NOT NULL REFERENCES events (id),
    attempt         INTEGER NOT NULL,
    started_at      INTEGER NOT NULL,
    status_code     INTEGER,
    latency_ms      INTEGER NOT NULL,
    error           TEXT,
    next_attempt_at INTEGER
);
CREATE INDEX event_attempts_by_event ON event_attempts (event_id, id);

ALTER TABLE emails ADD COLUMN message_id TEXT;
ALTER TABLE emails ADD COLUMN lease_until INTEGER;
ALTER TABLE emails ADD COLUMN last_error TEXT;

-- Webhook endpoints (DESIGN §12): destinations a merchant registers beside each membership's
-- `webhookUrl`. Every event is written with one `endpoint_deliveries` row per enabled endpoint
-- whose filter takes it, in the transaction of the change (the outbox stays transactional);
-- each delivery has its own schedule and each attempt its row in `endpoint_attempts`.
--
-- Secrets are sealed with the server key, as the merchant's own signing secret is. After a
-- rotation the previous secret signs too until `previous_secret_until` (merchant time).
-- `failing_since`: the merchant time of the first failed attempt since the endpoint's last
-- success; an endpoint failing for five days is disabled (`disabled_at`). A deleted endpoint
-- keeps its row (`deleted_at`) so its attempt log stays whole; nothing is sent to it again.
CREATE TABLE webhook_endpoints (
    id                      INTEGER PRIMARY KEY,
    merchant_id             INTEGER NOT NULL REFERENCES merchants (id),
    endpoint_key            TEXT NOT NULL UNIQUE,
    url                     TEXT NOT NULL,
    description             TEXT,
    all_events              INTEGER NOT NULL CHECK (all_events IN (0, 1)),
    enabled                 INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    secret_sealed           TEXT NOT NULL,
    previous_secret_sealed  TEXT,
    previous_secret_until   INTEGER,
    failing_since           INTEGER,
    disabled_at             INTEGER,
    created_at              INTEGER NOT NULL,
    deleted_at              INTEGER
);
-- A merchant's endpoints, newest first (the list, the cap, and the fan-out of each event).
CREATE INDEX webhook_endpoints_by_merchant ON webhook_endpoints (merchant_id, id)
    WHERE deleted_at IS NULL;

-- The `Action`s an endpoint with a filter takes (none for `all_events`).
CREATE TABLE webhook_endpoint_events (
    endpoint_id     INTEGER NOT NULL REFERENCES webhook_endpoints (id),
    action          TEXT NOT NULL,
    PRIMARY KEY (endpoint_id, action)
);

-- One event's delivery to one endpoint. `event_id` is NULL for a test event, whose payload is
-- the row's own; an event's payload is read from `events`.
CREATE TABLE endpoint_deliveries (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    endpoint_id         INTEGER NOT NULL REFERENCES webhook_endpoints (id),
    event_id            INTEGER REFERENCES events (id),
    action_id           TEXT NOT NULL,
    action              TEXT NOT NULL,
    payload             TEXT,
    status              TEXT NOT NULL CHECK (status IN ('Pending', 'Delivered', 'Undeliverable')),
    attempts            INTEGER NOT NULL,
    round_attempts      INTEGER NOT NULL,
    next_attempt_at     INTEGER,
    lease_until         INTEGER,
    delivered_at        INTEGER,
    created_at          INTEGER NOT NULL,
    CHECK ((event_id IS NULL) <> (payload IS NULL))
);
CREATE INDEX endpoint_deliveries_due ON endpoint_deliveries (next_attempt_at, id)
    WHERE status = 'Pending';
CREATE INDEX endpoint_deliveries_by_event ON endpoint_deliveries (event_id)
    WHERE event_id IS NOT NULL;

-- Every attempt of every delivery to an endpoint: the endpoint's attempt log, newest first.
CREATE TABLE endpoint_attempts (
    id              INTEGER PRIMARY KEY,
    merchant_id     INTEGER NOT NULL REFERENCES merchants (id),
    endpoint_id     INTEGER NOT NULL REFERENCES webhook_endpoints (id),
    delivery_id     INTEGER NOT NULL REFERENCES endpoint_deliveries (id),
    attempt         INTEGER NOT NULL,
    started_at      INTEGER NOT NULL,
    status_code     INTEGER,
    latency_ms      INTEGER NOT NULL,
    error           TEXT,
    next_attempt_at INTEGER
);
CREATE INDEX endpoint_attempts_by_endpoint ON endpoint_attempts (endpoint_id, id);

-- E-mails to the merchant itself (an endpoint disabled) beside those to its customers: such an
-- e-mail has no customer. SQLite changes a column's constraints by rebuilding the table.
CREATE TABLE emails_new (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    customer_id         INTEGER REFERENCES customers (id),
    kind                TEXT NOT NULL CHECK (kind IN ('receipt', 'invoice', 'payment_failed', 'canceled', 'endpoint_disabled')),
    to_address          TEXT NOT NULL,
    subject             TEXT NOT NULL,
    text_body           TEXT NOT NULL,
    html_body           TEXT NOT NULL,
    status              TEXT NOT NULL CHECK (status IN ('Pending', 'Sent', 'Failed')),
    attempts            INTEGER NOT NULL,
    next_attempt_at     INTEGER,
    created_at          INTEGER NOT NULL,
    sent_at             INTEGER,
    message_id          TEXT,
    lease_until         INTEGER,
    last_error          TEXT,
    link_session        TEXT,
    reply_to            TEXT
);
INSERT INTO emails_new (id, merchant_id, customer_id, kind, to_address, subject, text_body,
    html_body, status, attempts, next_attempt_at, created_at, sent_at, message_id, lease_until,
    last_error, link_session, reply_to)
SELECT id, merchant_id, customer_id, kind, to_address, subject, text_body, html_body, status,
    attempts, next_attempt_at, created_at, sent_at, message_id, lease_until, last_error,
    link_session, reply_to
FROM emails;
DROP TABLE emails;
ALTER TABLE emails_new RENAME TO emails;
CREATE INDEX emails_due ON emails (next_attempt_at, id) WHERE status = 'Pending';

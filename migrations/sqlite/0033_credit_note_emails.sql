-- The customer e-mail about a credit note (a refund, or a finalized invoice voided with no other
-- e-mail to list it in). SQLite changes a column's constraints by rebuilding the table.
CREATE TABLE emails_new (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    customer_id         INTEGER REFERENCES customers (id),
    kind                TEXT NOT NULL CHECK (kind IN ('receipt', 'invoice', 'payment_failed',
                            'canceled', 'endpoint_disabled', 'credit_note')),
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

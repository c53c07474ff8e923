-- Responses remembered for the Idempotency-Key header: same key and same request within 24 h
-- replays the first response. status 0 marks a request still being handled.
CREATE TABLE idempotency_keys (
    merchant_id     INTEGER NOT NULL REFERENCES merchants (id),
    idempotency_key TEXT NOT NULL,
    request_hash    TEXT NOT NULL,
    status          INTEGER NOT NULL,
    content_type    TEXT,
    response_body   BLOB,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (merchant_id, idempotency_key)
);

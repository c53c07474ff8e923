-- Responses remembered for the Idempotency-Key header: same key and same request within 24 h
-- replays the first response. status 0 marks a request still being handled.
CREATE TABLE idempotency_keys (
    merchant_id     BIGINT NOT NULL REFERENCES merchants (id),
    idempotency_key TEXT NOT NULL,
    request_hash    TEXT NOT NULL,
    status          BIGINT NOT NULL,
    content_type    TEXT,
    response_body   BYTEA,
    created_at      BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, idempotency_key)
);

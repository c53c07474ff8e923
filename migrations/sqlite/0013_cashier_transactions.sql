-- Cashier payments, payouts and refunds (the hosted payment page's transactions) and what a
-- cashier session keeps between the card form and the identity-confirmation step.
ALTER TABLE hosted_page_sessions ADD COLUMN claimed_until INTEGER;
ALTER TABLE hosted_page_sessions ADD COLUMN pending_card TEXT;
ALTER TABLE hosted_page_sessions ADD COLUMN pending_amount INTEGER;
ALTER TABLE hosted_page_sessions ADD COLUMN pending_processor_id INTEGER;

-- One row per transaction (`TransactionId`); `attempts` holds the cascade's attempts as JSON in
-- the notification's `AttemptsVector` shape. Card columns hold the processor token, brand, BIN,
-- last four digits and keyed fingerprint, never the number.
CREATE TABLE cashier_transactions (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    session_id          INTEGER NOT NULL REFERENCES hosted_page_sessions (id),
    order_id            TEXT NOT NULL,
    idempotency_key     TEXT NOT NULL UNIQUE,
    kind                TEXT NOT NULL CHECK (kind IN ('PayIn', 'PayOut', 'Refund')),
    status              TEXT NOT NULL CHECK (status IN ('Success', 'Rejected', 'Failed')),
    amount              INTEGER NOT NULL,
    initial_amount      INTEGER NOT NULL,
    currency            TEXT NOT NULL,
    processor_id        INTEGER NOT NULL,
    external_id         TEXT,
    decline_code        TEXT,
    decline_reason      TEXT,
    card_token          TEXT,
    card_brand          TEXT,
    card_bin            TEXT,
    card_last4          TEXT,
    card_fingerprint    TEXT,
    bin_type            TEXT,
    card_issuer         TEXT,
    card_country        TEXT,
    client_ip           TEXT,
    cascade_id          TEXT NOT NULL,
    attempts            TEXT NOT NULL,
    parent_id           INTEGER REFERENCES cashier_transactions (id),
    retried             INTEGER NOT NULL,
    created_at          INTEGER NOT NULL
);
CREATE INDEX cashier_transactions_order ON cashier_transactions (merchant_id, order_id, id);
CREATE INDEX cashier_transactions_session ON cashier_transactions (session_id);

-- Webhook re-sync finds the newest notification of an order.
CREATE INDEX events_by_order ON events (merchant_id, order_id, id);

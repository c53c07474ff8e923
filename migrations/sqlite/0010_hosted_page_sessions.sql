-- Hosted payment page sessions (POST /api/payment/hosted-page). The session token is kept sealed
-- and found by a keyed digest; the billing details are the request's, as JSON.
CREATE TABLE hosted_page_sessions (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    order_id            TEXT NOT NULL,
    token_digest        TEXT NOT NULL UNIQUE,
    token_sealed        TEXT NOT NULL,
    currency            TEXT NOT NULL,
    locked_amount       INTEGER,
    billing_details     TEXT NOT NULL,
    webhook_url         TEXT,
    success_redirect_url TEXT,
    failed_redirect_url TEXT,
    disabled_psp_ids    TEXT NOT NULL,
    credit_card_only    INTEGER NOT NULL,
    is_payout           INTEGER NOT NULL,
    cashier_description TEXT,
    status              TEXT NOT NULL CHECK (status IN ('open', 'completed')),
    created_at          INTEGER NOT NULL,
    expires_at          INTEGER NOT NULL
);
CREATE INDEX hosted_page_sessions_order ON hosted_page_sessions (merchant_id, order_id, expires_at);

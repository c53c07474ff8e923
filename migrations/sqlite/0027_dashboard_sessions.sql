-- Sessions of the merchant dashboard (DESIGN §13). The browser holds a random token in a
-- cookie; the row keeps only its keyed digest (`token_digest`), so the table alone cannot be
-- used to log in. A session ends after 30 minutes without a request: `seen_at` is the server's
-- time of the last request, `merchant_seen_at` the merchant's time then (its test clock, for a
-- sandbox merchant that has one); a session idle for 30 minutes on either has ended.
CREATE TABLE dashboard_sessions (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    token_digest        TEXT NOT NULL UNIQUE,
    created_at          INTEGER NOT NULL,
    seen_at             INTEGER NOT NULL,
    merchant_seen_at    INTEGER NOT NULL
);
-- A merchant's sessions, to clear the ended ones at each login.
CREATE INDEX dashboard_sessions_by_merchant ON dashboard_sessions (merchant_id, seen_at);

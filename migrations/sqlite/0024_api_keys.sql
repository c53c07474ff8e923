-- API keys (DESIGN §11): a merchant's long-lived credentials for `Authorization: Bearer rk_…`.
-- The secret is never stored: only its keyed lookup digest (HMAC-SHA256 under a key derived
-- from the server key), by which a request's key is found. A revoked key keeps its row, with
-- `revoked_at`, so its digest and id are never handed out again.
CREATE TABLE api_keys (
    id              INTEGER PRIMARY KEY,
    merchant_id     INTEGER NOT NULL REFERENCES merchants (id),
    key_id          TEXT NOT NULL UNIQUE,
    name            TEXT NOT NULL,
    scope           TEXT NOT NULL CHECK (scope IN ('read', 'write')),
    secret_digest   TEXT NOT NULL UNIQUE,
    created_at      INTEGER NOT NULL,
    last_used_at    INTEGER,
    revoked_at      INTEGER
);
-- A merchant's live keys, newest first (the list, and the count held to the cap).
CREATE INDEX api_keys_live_by_merchant ON api_keys (merchant_id, created_at, id)
    WHERE revoked_at IS NULL;

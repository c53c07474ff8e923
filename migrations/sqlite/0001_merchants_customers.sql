-- Merchants and their customers. Times are Unix microseconds (UTC); secrets are sealed with the
-- server key and found by a keyed digest, never stored in the clear.
CREATE TABLE merchants (
    id                      INTEGER PRIMARY KEY,
    name                    TEXT NOT NULL,
    user_name               TEXT NOT NULL UNIQUE,
    password_hash           TEXT NOT NULL,
    processor_key           TEXT NOT NULL UNIQUE,
    secret_digest           TEXT NOT NULL UNIQUE,
    secret_sealed           TEXT NOT NULL,
    webhook_secret_sealed   TEXT NOT NULL,
    mode                    TEXT NOT NULL CHECK (mode IN ('sandbox', 'live')),
    created_at              INTEGER NOT NULL
);

CREATE TABLE customers (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    customer_key        TEXT NOT NULL UNIQUE,
    processor_key       TEXT NOT NULL,
    first_name          TEXT NOT NULL,
    last_name           TEXT NOT NULL,
    email               TEXT NOT NULL,
    email_identity      TEXT NOT NULL,
    phone               TEXT NOT NULL,
    country_code        TEXT NOT NULL,
    address1            TEXT,
    address2            TEXT,
    city                TEXT,
    state               TEXT,
    zip_code            TEXT,
    tax_ids             TEXT NOT NULL,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    UNIQUE (merchant_id, email_identity)
);

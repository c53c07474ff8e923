-- SEPA Direct Debit from the merchant's own bank account (DESIGN §18). A SEPA processor is one
-- more connected processor of the merchant's set (`payment_processors`, connector 'sepa', kind
-- 'debit', ids from 301 on like Stripe accounts); its creditor details live beside it. SQLite
-- changes a CHECK only by rebuilding the table (foreign keys are off while migrations run).
CREATE TABLE payment_processors_rebuilt (
    merchant_id     INTEGER NOT NULL REFERENCES merchants (id),
    processor_id    INTEGER NOT NULL,
    processor_key   TEXT NOT NULL,
    name            TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('card', 'alternative', 'debit')),
    position        INTEGER NOT NULL,
    connector       TEXT NOT NULL DEFAULT 'sandbox'
        CHECK (connector IN ('sandbox', 'stripe', 'sepa')),
    created_at      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (merchant_id, processor_id)
);
INSERT INTO payment_processors_rebuilt
    (merchant_id, processor_id, processor_key, name, kind, position, connector, created_at)
SELECT merchant_id, processor_id, processor_key, name, kind, position, connector, created_at
FROM payment_processors;
DROP TABLE payment_processors;
ALTER TABLE payment_processors_rebuilt RENAME TO payment_processors;
CREATE UNIQUE INDEX payment_processors_connected_id ON payment_processors (processor_id)
    WHERE connector <> 'sandbox';

-- The creditor a SEPA processor collects for: its SEPA creditor identifier, the name and
-- collection account (IBAN, optional BIC) the collection files carry, and how many days
-- before a collection the customer is notified of it.
CREATE TABLE sepa_accounts (
    merchant_id     INTEGER NOT NULL,
    processor_id    INTEGER NOT NULL,
    creditor_id     TEXT NOT NULL,
    creditor_name   TEXT NOT NULL,
    iban            TEXT NOT NULL,
    bic             TEXT,
    lead_days       INTEGER NOT NULL CHECK (lead_days BETWEEN 1 AND 14),
    PRIMARY KEY (merchant_id, processor_id),
    FOREIGN KEY (merchant_id, processor_id)
        REFERENCES payment_processors (merchant_id, processor_id) ON DELETE CASCADE
);

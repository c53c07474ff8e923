-- Hosted checkout and the customer portal: their sessions, cards that wait for a successful
-- payment before they are used for renewals, and charges started by the customer on a pay-now
-- link.

-- A checkout session pays one membership; a portal session (membership_id NULL) lets the
-- customer manage all of theirs. Only a keyed digest of the token is kept.
CREATE TABLE checkout_sessions (
    id                      INTEGER PRIMARY KEY,
    merchant_id             INTEGER NOT NULL REFERENCES merchants (id),
    customer_id             INTEGER NOT NULL REFERENCES customers (id),
    membership_id           INTEGER REFERENCES memberships (id),
    session_key             TEXT NOT NULL UNIQUE,
    token_digest            TEXT NOT NULL UNIQUE,
    kind                    TEXT NOT NULL CHECK (kind IN ('checkout', 'portal')),
    return_url              TEXT,
    pending_payment_method_id INTEGER REFERENCES payment_methods (id),
    challenge_pending       INTEGER NOT NULL DEFAULT 0,
    created_at              INTEGER NOT NULL,
    expires_at              INTEGER NOT NULL,
    completed_at            INTEGER
);

-- NULL until the card has paid (checkout) or been verified (portal, test helper); only
-- attached cards are charged for renewals.
ALTER TABLE payment_methods ADD COLUMN attached_at INTEGER;
UPDATE payment_methods SET attached_at = created_at;

-- 'pay_now': the customer pays a PastDue or Unpaid membership's open invoice on a checkout page.
-- SQLite cannot change a CHECK constraint in place; nothing references charges, so the table is
-- rebuilt.
CREATE TABLE charges_next (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    membership_id       INTEGER NOT NULL REFERENCES memberships (id),
    invoice_id          INTEGER NOT NULL REFERENCES invoices (id),
    idempotency_key     TEXT NOT NULL UNIQUE,
    kind                TEXT NOT NULL CHECK (kind IN ('first', 'renewal', 'retry', 'proration', 'pay_now')),
    recurring_ordinal   INTEGER,
    directive           TEXT,
    amount              INTEGER NOT NULL,
    currency            TEXT NOT NULL,
    payment_method_id   INTEGER NOT NULL REFERENCES payment_methods (id),
    status              TEXT NOT NULL CHECK (status IN ('Pending', 'Success', 'Rejected', 'Failed')),
    decline_code        TEXT,
    decline_reason      TEXT,
    processor_reference TEXT,
    pending_update      TEXT,
    created_at          INTEGER NOT NULL,
    completed_at        INTEGER
);
INSERT INTO charges_next SELECT id, merchant_id, membership_id, invoice_id, idempotency_key, kind,
    recurring_ordinal, directive, amount, currency, payment_method_id, status, decline_code,
    decline_reason, processor_reference, pending_update, created_at, completed_at FROM charges;
DROP TABLE charges;
ALTER TABLE charges_next RENAME TO charges;
CREATE INDEX charges_pending ON charges (created_at) WHERE status = 'Pending';
CREATE INDEX charges_by_invoice ON charges (invoice_id, id);

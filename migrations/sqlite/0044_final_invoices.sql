-- DESIGN §19: a membership that ends (canceled, or completed at its `endDate`) bills its last
-- period's usage on a final invoice of its own, charged by an attempt of kind 'final'.
-- SQLite changes a CHECK constraint only by rebuilding the table (migrations run with foreign
-- keys unenforced and checked afterwards: `Store::migrate`); the rebuilt tables keep their
-- columns, rows and indexes.
CREATE TABLE invoices_next (
    id              INTEGER PRIMARY KEY,
    merchant_id     INTEGER NOT NULL REFERENCES merchants (id),
    membership_id   INTEGER NOT NULL REFERENCES memberships (id),
    invoice_key     TEXT NOT NULL UNIQUE,
    billing_key     TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('first', 'renewal', 'proration', 'final')),
    status          TEXT NOT NULL CHECK (status IN ('Draft', 'Open', 'Paid', 'Void', 'Uncollectible')),
    currency        TEXT NOT NULL,
    period_start    INTEGER,
    period_end      INTEGER,
    subtotal        INTEGER NOT NULL,
    credit_applied  INTEGER NOT NULL,
    amount_due      INTEGER NOT NULL,
    amount_paid     INTEGER NOT NULL,
    lines           TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    paid_at         INTEGER,
    voided_at       INTEGER,
    amount_refunded INTEGER NOT NULL DEFAULT 0,
    discount        INTEGER NOT NULL DEFAULT 0,
    total           INTEGER NOT NULL DEFAULT 0,
    reverse_charge  INTEGER NOT NULL DEFAULT 0 CHECK (reverse_charge IN (0, 1)),
    taxes           TEXT NOT NULL DEFAULT '[]',
    number          TEXT,
    coupon          TEXT,
    disputed        INTEGER NOT NULL DEFAULT 0 CHECK (disputed IN (0, 1)),
    UNIQUE (membership_id, billing_key)
);
INSERT INTO invoices_next (id, merchant_id, membership_id, invoice_key, billing_key, kind, status,
    currency, period_start, period_end, subtotal, credit_applied, amount_due, amount_paid, lines,
    created_at, paid_at, voided_at, amount_refunded, discount, total, reverse_charge, taxes,
    number, coupon, disputed)
SELECT id, merchant_id, membership_id, invoice_key, billing_key, kind, status, currency,
    period_start, period_end, subtotal, credit_applied, amount_due, amount_paid, lines,
    created_at, paid_at, voided_at, amount_refunded, discount, total, reverse_charge, taxes,
    number, coupon, disputed
FROM invoices;
DROP TABLE invoices;
ALTER TABLE invoices_next RENAME TO invoices;
CREATE INDEX invoices_by_membership ON invoices (membership_id, id);
CREATE INDEX invoices_by_merchant ON invoices (merchant_id, id);
CREATE INDEX invoices_by_status ON invoices (merchant_id, status, id);
CREATE INDEX invoices_paid_at ON invoices (merchant_id, paid_at, currency, amount_paid)
    WHERE status = 'Paid';
CREATE UNIQUE INDEX invoices_by_number ON invoices (merchant_id, number);

CREATE TABLE charges_next (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    membership_id       INTEGER NOT NULL REFERENCES memberships (id),
    invoice_id          INTEGER NOT NULL REFERENCES invoices (id),
    idempotency_key     TEXT NOT NULL UNIQUE,
    kind                TEXT NOT NULL
        CHECK (kind IN ('first', 'renewal', 'retry', 'proration', 'pay_now', 'final')),
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
    completed_at        INTEGER,
    page_session_id     TEXT,
    client_ip           TEXT
);
INSERT INTO charges_next (id, merchant_id, membership_id, invoice_id, idempotency_key, kind,
    recurring_ordinal, directive, amount, currency, payment_method_id, status, decline_code,
    decline_reason, processor_reference, pending_update, created_at, completed_at,
    page_session_id, client_ip)
SELECT id, merchant_id, membership_id, invoice_id, idempotency_key, kind, recurring_ordinal,
    directive, amount, currency, payment_method_id, status, decline_code, decline_reason,
    processor_reference, pending_update, created_at, completed_at, page_session_id, client_ip
FROM charges;
DROP TABLE charges;
ALTER TABLE charges_next RENAME TO charges;
CREATE INDEX charges_pending ON charges (created_at) WHERE status = 'Pending';
CREATE INDEX charges_by_invoice ON charges (invoice_id, id);
CREATE UNIQUE INDEX charges_in_flight ON charges (membership_id) WHERE status = 'Pending';

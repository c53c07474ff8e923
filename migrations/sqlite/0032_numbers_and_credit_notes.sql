-- Invoice and credit-note numbers (DESIGN §9): `{prefix}-{YYYY}-{NNNNNN}`, without gaps per
-- merchant, series and year. `last_value` is the last number handed out; the transaction that
-- finalizes an invoice (or writes a credit note) raises it with one upsert, whose row lock
-- serializes concurrent finalizations until commit, so a rolled-back finalization returns its
-- numbers. The unique index on (merchant_id, number) is the backstop.
CREATE TABLE document_counters (
    merchant_id     INTEGER NOT NULL REFERENCES merchants (id),
    series          TEXT NOT NULL CHECK (series IN ('invoice', 'credit_note')),
    year            INTEGER NOT NULL,
    last_value      INTEGER NOT NULL CHECK (last_value > 0),
    PRIMARY KEY (merchant_id, series, year)
);

-- NULL until the invoice is finalized (its first payment attempt, or paid by credit at once).
ALTER TABLE invoices ADD COLUMN number TEXT;
CREATE UNIQUE INDEX invoices_by_number ON invoices (merchant_id, number);

-- Credit notes (DESIGN §9): one per succeeded refund, and one for the total of a finalized
-- (numbered) invoice when it is voided. Numbered `CN-{YYYY}-{NNNNNN}` from the `credit_note`
-- series, in the transaction that writes them.
CREATE TABLE credit_notes (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    credit_note_key     TEXT NOT NULL UNIQUE,
    number              TEXT NOT NULL,
    invoice_id          INTEGER NOT NULL REFERENCES invoices (id),
    refund_id           INTEGER UNIQUE REFERENCES refunds (id),
    kind                TEXT NOT NULL CHECK (kind IN ('refund', 'void')),
    amount              INTEGER NOT NULL CHECK (amount > 0),
    currency            TEXT NOT NULL,
    reason              TEXT,
    created_at          INTEGER NOT NULL,
    UNIQUE (merchant_id, number),
    CHECK ((kind = 'refund') = (refund_id IS NOT NULL))
);
CREATE INDEX credit_notes_by_invoice ON credit_notes (invoice_id, id);

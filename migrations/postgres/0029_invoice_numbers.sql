-- Invoice and credit-note numbers (DESIGN §9): `{prefix}-{YYYY}-{NNNNNN}`, without gaps per
-- merchant, series and year. `last_value` is the last number handed out; the transaction that
-- finalizes an invoice (or writes a credit note) raises it with one upsert, whose row lock
-- serializes concurrent finalizations until commit, so a rolled-back finalization returns its
-- numbers. The unique index on (merchant_id, number) is the backstop.
CREATE TABLE document_counters (
    merchant_id     BIGINT NOT NULL REFERENCES merchants (id),
    series          TEXT NOT NULL CHECK (series IN ('invoice', 'credit_note')),
    year            BIGINT NOT NULL,
    last_value      BIGINT NOT NULL CHECK (last_value > 0),
    PRIMARY KEY (merchant_id, series, year)
);

-- NULL until the invoice is finalized (its first payment attempt, or paid by credit at once).
ALTER TABLE invoices ADD COLUMN number TEXT;
CREATE UNIQUE INDEX invoices_by_number ON invoices (merchant_id, number);

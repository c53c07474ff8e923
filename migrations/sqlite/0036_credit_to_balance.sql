-- DESIGN §4: credit is never a negative invoice. Money a change owes back to the customer (a
-- downgrade's proration, the unused time at a pause or an interval change) is a credit note of
-- kind `credit`, naming the invoice that billed the period it credits, its amount added to the
-- membership's credit balance. Negative invoices written before stay as they are (numbers are
-- never reused or rewritten). SQLite changes a column's constraints by rebuilding the table.
CREATE TABLE credit_notes_new (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    credit_note_key     TEXT NOT NULL UNIQUE,
    number              TEXT NOT NULL,
    invoice_id          INTEGER NOT NULL REFERENCES invoices (id),
    refund_id           INTEGER UNIQUE REFERENCES refunds (id),
    kind                TEXT NOT NULL CHECK (kind IN ('refund', 'void', 'credit')),
    amount              INTEGER NOT NULL CHECK (amount > 0),
    currency            TEXT NOT NULL,
    reason              TEXT,
    created_at          INTEGER NOT NULL,
    UNIQUE (merchant_id, number),
    CHECK ((kind = 'refund') = (refund_id IS NOT NULL))
);
INSERT INTO credit_notes_new (id, merchant_id, credit_note_key, number, invoice_id, refund_id,
    kind, amount, currency, reason, created_at)
SELECT id, merchant_id, credit_note_key, number, invoice_id, refund_id, kind, amount, currency,
    reason, created_at
FROM credit_notes;
DROP TABLE credit_notes;
ALTER TABLE credit_notes_new RENAME TO credit_notes;
CREATE INDEX credit_notes_by_invoice ON credit_notes (invoice_id, id);

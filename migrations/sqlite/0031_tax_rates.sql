-- Tax rates (DESIGN §14). `percentage` is the decimal as checked and normalized (text, never a
-- float). Once a membership has been given the rate (`used`, set by the statement that reads
-- it for the membership), its percentage, inclusiveness and country never change.
CREATE TABLE tax_rates (
    id              INTEGER PRIMARY KEY,
    merchant_id     INTEGER NOT NULL REFERENCES merchants (id),
    tax_rate_key    TEXT NOT NULL UNIQUE,
    name            TEXT NOT NULL,
    percentage      TEXT NOT NULL,
    inclusive       INTEGER NOT NULL CHECK (inclusive IN (0, 1)),
    country         TEXT,
    active          INTEGER NOT NULL CHECK (active IN (0, 1)),
    used            INTEGER NOT NULL DEFAULT 0 CHECK (used IN (0, 1)),
    created_at      INTEGER NOT NULL
);
-- The merchant's list, newest first.
CREATE INDEX tax_rates_by_merchant ON tax_rates (merchant_id, id);

-- The rates a membership bills with: a JSON snapshot (`recur_domain::tax::TaxRate`, in order),
-- read with the membership's row, so building an invoice costs no statement of its own.
ALTER TABLE memberships ADD COLUMN tax_rates TEXT NOT NULL DEFAULT '[]';

-- What an invoice owes after discount and taxes; `total` is what credit and the card settle.
ALTER TABLE invoices ADD COLUMN discount INTEGER NOT NULL DEFAULT 0;
ALTER TABLE invoices ADD COLUMN total INTEGER NOT NULL DEFAULT 0;
ALTER TABLE invoices ADD COLUMN reverse_charge INTEGER NOT NULL DEFAULT 0 CHECK (reverse_charge IN (0, 1));
UPDATE invoices SET total = subtotal;

-- Each tax of an invoice: a JSON snapshot of the rate when invoiced and its amount
-- (`recur_domain::tax::InvoiceTax`, in the membership's order), kept like `lines`: read with the
-- invoice's row by every reader, written by the same statement as the invoice.
ALTER TABLE invoices ADD COLUMN taxes TEXT NOT NULL DEFAULT '[]';

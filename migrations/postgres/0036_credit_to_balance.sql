-- DESIGN §4: credit is never a negative invoice. Money a change owes back to the customer (a
-- downgrade's proration, the unused time at a pause or an interval change) is a credit note of
-- kind `credit`, naming the invoice that billed the period it credits, its amount added to the
-- membership's credit balance. Negative invoices written before stay as they are (numbers are
-- never reused or rewritten).
ALTER TABLE credit_notes DROP CONSTRAINT credit_notes_kind_check;
ALTER TABLE credit_notes ADD CONSTRAINT credit_notes_kind_check
    CHECK (kind IN ('refund', 'void', 'credit'));

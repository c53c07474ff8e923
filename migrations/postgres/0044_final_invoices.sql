-- DESIGN §19: a membership that ends (canceled, or completed at its `endDate`) bills its last
-- period's usage on a final invoice of its own, charged by an attempt of kind 'final'.
ALTER TABLE invoices DROP CONSTRAINT invoices_kind_check;
ALTER TABLE invoices ADD CONSTRAINT invoices_kind_check
    CHECK (kind IN ('first', 'renewal', 'proration', 'final'));
ALTER TABLE charges DROP CONSTRAINT charges_kind_check;
ALTER TABLE charges ADD CONSTRAINT charges_kind_check
    CHECK (kind IN ('first', 'renewal', 'retry', 'proration', 'pay_now', 'final'));

-- The dashboard's overview (DESIGN §13): figures read from indexes that hold exactly their rows,
-- so their cost follows what they count (the memberships that renew, the last 30 days), never the
-- length of the history.
--
-- Monthly recurring revenue sums the prices of the memberships that renew (Active, PastDue),
-- grouped by currency and cycle: read from this index alone.
CREATE INDEX memberships_recurring ON memberships
    (merchant_id, status, currency, interval_type, interval_count, total_amount);

-- Revenue by day: invoices paid, and invoice refunds that succeeded, in a time range.
CREATE INDEX invoices_paid_at ON invoices (merchant_id, paid_at, currency, amount_paid)
    WHERE status = 'Paid';
CREATE INDEX refunds_completed_at ON refunds (merchant_id, completed_at, currency, amount)
    WHERE status = 'Succeeded' AND invoice_id IS NOT NULL;

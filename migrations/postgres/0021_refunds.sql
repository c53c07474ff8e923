-- The refund ledger: every refund, of a subscription invoice or of a cashier order's payment,
-- is one row here. A refund's id is its `TransactionId`, drawn from the one sequence that also
-- numbers charge attempts and cashier transactions (`transaction_ids`; SQLite takes one past the
-- largest id of the three tables inside its write transaction), so no two money movements of a
-- merchant share a `TransactionId`.
--
-- A subscription refund is written `Pending` (reserving its amount) before the processor is
-- asked, and completed `Succeeded` or `Failed` with the answer; a cashier refund is written
-- complete, beside its `cashier_transactions` row of the same id.
CREATE SEQUENCE transaction_ids;
SELECT setval('transaction_ids', GREATEST(
    (SELECT COALESCE(MAX(id), 0) FROM charges),
    (SELECT COALESCE(MAX(id), 0) FROM cashier_transactions),
    1));
ALTER TABLE charges ALTER COLUMN id DROP IDENTITY;
ALTER TABLE charges ALTER COLUMN id SET DEFAULT nextval('transaction_ids');
ALTER TABLE cashier_transactions ALTER COLUMN id DROP IDENTITY;
ALTER TABLE cashier_transactions ALTER COLUMN id SET DEFAULT nextval('transaction_ids');

CREATE TABLE refunds (
    id                      BIGINT PRIMARY KEY DEFAULT nextval('transaction_ids'),
    merchant_id             BIGINT NOT NULL REFERENCES merchants (id),
    refund_key              TEXT NOT NULL UNIQUE,
    invoice_id              BIGINT REFERENCES invoices (id),
    charge_id               BIGINT REFERENCES charges (id),
    cashier_payment_id      BIGINT REFERENCES cashier_transactions (id),
    idempotency_key         TEXT NOT NULL UNIQUE,
    amount                  BIGINT NOT NULL CHECK (amount > 0),
    currency                TEXT NOT NULL,
    status                  TEXT NOT NULL CHECK (status IN ('Pending', 'Succeeded', 'Failed')),
    reason                  TEXT,
    processor_reference     TEXT,
    decline_code            TEXT,
    decline_reason          TEXT,
    created_at              BIGINT NOT NULL,
    completed_at            BIGINT,
    CHECK ((invoice_id IS NULL) <> (cashier_payment_id IS NULL))
);
CREATE INDEX refunds_by_invoice ON refunds (invoice_id, id) WHERE invoice_id IS NOT NULL;
CREATE INDEX refunds_by_payment ON refunds (cashier_payment_id) WHERE cashier_payment_id IS NOT NULL;
CREATE INDEX refunds_pending ON refunds (created_at) WHERE status = 'Pending';

-- What of the invoice's card payment has been given back (succeeded refunds).
ALTER TABLE invoices ADD COLUMN amount_refunded BIGINT NOT NULL DEFAULT 0;

-- Cashier refunds made before the ledger existed.
INSERT INTO refunds (id, merchant_id, refund_key, cashier_payment_id, idempotency_key, amount,
                     currency, status, processor_reference, decline_code, decline_reason,
                     created_at, completed_at)
SELECT id, merchant_id, 'rfnd_migrated' || id, parent_id, 'cashier:' || id, amount, currency,
       CASE status WHEN 'Success' THEN 'Succeeded' ELSE 'Failed' END, external_id, decline_code,
       decline_reason, created_at, created_at
FROM cashier_transactions WHERE kind = 'Refund' AND amount > 0;

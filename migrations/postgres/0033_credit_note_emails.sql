-- The customer e-mail about a credit note (a refund, or a finalized invoice voided with no other
-- e-mail to list it in).
ALTER TABLE emails DROP CONSTRAINT emails_kind_check;
ALTER TABLE emails ADD CONSTRAINT emails_kind_check
    CHECK (kind IN ('receipt', 'invoice', 'payment_failed', 'canceled', 'endpoint_disabled',
                    'credit_note'));

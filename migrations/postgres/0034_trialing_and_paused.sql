-- Two membership statuses beyond the interface document (DESIGN §15): Trialing (card saved, first
-- charge at trialEnd) and Paused (no charges, no dunning). And the e-mail three days before a
-- trial ends.
ALTER TABLE memberships DROP CONSTRAINT memberships_status_check;
ALTER TABLE memberships ADD CONSTRAINT memberships_status_check
    CHECK (status IN ('Incomplete', 'Expired', 'Active', 'PastDue', 'Unpaid', 'Canceled',
                      'Completed', 'Trialing', 'Paused'));
ALTER TABLE emails DROP CONSTRAINT emails_kind_check;
ALTER TABLE emails ADD CONSTRAINT emails_kind_check
    CHECK (kind IN ('receipt', 'invoice', 'payment_failed', 'canceled', 'endpoint_disabled',
                    'credit_note', 'trial_will_end'));

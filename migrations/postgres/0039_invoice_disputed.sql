-- An invoice whose payment the cardholder disputed with their bank (a Stripe
-- charge.dispute.created event, DESIGN §17): 1 once disputed.
ALTER TABLE invoices ADD COLUMN disputed BIGINT NOT NULL DEFAULT 0 CHECK (disputed IN (0, 1));

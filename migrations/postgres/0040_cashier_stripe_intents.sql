-- A cashier payment through a connected Stripe account (DESIGN §17) parked on its session
-- while Stripe decides or the customer authenticates it: the PaymentIntent (`pi_…`), and when
-- it was parked (microseconds), so that one left unauthenticated is settled or cancelled.
ALTER TABLE cashier_sessions ADD COLUMN pending_intent TEXT;
ALTER TABLE cashier_sessions ADD COLUMN pending_since BIGINT;
CREATE INDEX cashier_sessions_parked_intents ON cashier_sessions (merchant_id, pending_since)
    WHERE pending_intent IS NOT NULL;

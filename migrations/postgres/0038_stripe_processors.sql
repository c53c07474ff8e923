-- Stripe accounts a merchant connects (DESIGN §17). A connected account is one more card
-- processor of the merchant's set (`payment_processors`, ids from 301 on, unique across
-- merchants, `connector` 'stripe'); its keys live beside it, the secret key and the webhook signing secret sealed with
-- the server key. The merchant's default card processor takes new cards on the hosted pages;
-- NULL means the sandbox gateways, as before.
ALTER TABLE payment_processors ADD COLUMN connector TEXT NOT NULL DEFAULT 'sandbox'
    CHECK (connector IN ('sandbox', 'stripe'));
ALTER TABLE payment_processors ADD COLUMN created_at BIGINT NOT NULL DEFAULT 0;
-- A connected account's id is unique across merchants too: Stripe's webhooks reach
-- /webhooks/stripe/{paymentProcessorId}, which must name one account.
CREATE UNIQUE INDEX payment_processors_connected_id ON payment_processors (processor_id)
    WHERE connector <> 'sandbox';
ALTER TABLE merchants ADD COLUMN default_card_processor BIGINT;

CREATE TABLE stripe_accounts (
    merchant_id             BIGINT NOT NULL,
    processor_id            BIGINT NOT NULL,
    secret_key_sealed       TEXT NOT NULL,
    secret_key_last4        TEXT NOT NULL,
    live                    BIGINT NOT NULL CHECK (live IN (0, 1)),
    publishable_key         TEXT NOT NULL,
    webhook_secret_sealed   TEXT NOT NULL,
    PRIMARY KEY (merchant_id, processor_id),
    FOREIGN KEY (merchant_id, processor_id)
        REFERENCES payment_processors (merchant_id, processor_id) ON DELETE CASCADE
);

-- A payment method is held by one processor: NULL for the sandbox vault (every method stored
-- before this migration), else the Stripe processor whose customer it is attached to.
ALTER TABLE payment_methods ADD COLUMN processor_id BIGINT;

-- One Stripe Customer per recur customer and Stripe processor, created on first need.
CREATE TABLE stripe_customers (
    merchant_id         BIGINT NOT NULL,
    processor_id        BIGINT NOT NULL,
    customer_id         BIGINT NOT NULL REFERENCES customers (id),
    stripe_customer_id  TEXT NOT NULL,
    PRIMARY KEY (merchant_id, processor_id, customer_id),
    FOREIGN KEY (merchant_id, processor_id)
        REFERENCES payment_processors (merchant_id, processor_id) ON DELETE CASCADE
);

-- A card's expiry, as Stripe reports it (NULL for sandbox cards, which recur never asked for
-- one after checkout).
ALTER TABLE payment_methods ADD COLUMN exp_month BIGINT;
ALTER TABLE payment_methods ADD COLUMN exp_year BIGINT;

-- Each event Stripe sends to an account's webhook URL is handled once: its id is kept.
CREATE TABLE stripe_events (
    processor_id    BIGINT NOT NULL,
    event_id        TEXT NOT NULL,
    received_at     BIGINT NOT NULL,
    PRIMARY KEY (processor_id, event_id)
);

-- The billing engine: saved payment methods, memberships, invoices, charge attempts, the event
-- and e-mail outboxes, test clocks, and the built-in sandbox processor's own records.
-- Times are Unix microseconds (UTC); money is integer minor units beside a currency code.

CREATE TABLE payment_methods (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    customer_id         INTEGER NOT NULL REFERENCES customers (id),
    payment_method_key  TEXT NOT NULL UNIQUE,
    processor_token     TEXT NOT NULL,
    brand               TEXT NOT NULL,
    bin                 TEXT NOT NULL,
    last4               TEXT NOT NULL,
    fingerprint         TEXT NOT NULL,
    created_at          INTEGER NOT NULL,
    detached_at         INTEGER
);
CREATE INDEX payment_methods_by_customer ON payment_methods (customer_id, id);

CREATE TABLE memberships (
    id                      INTEGER PRIMARY KEY,
    merchant_id             INTEGER NOT NULL REFERENCES merchants (id),
    customer_id             INTEGER NOT NULL REFERENCES customers (id),
    membership_key          TEXT NOT NULL UNIQUE,
    order_id                TEXT NOT NULL,
    order_description       TEXT,
    subscription_name       TEXT NOT NULL,
    metadata                TEXT,
    webhook_url             TEXT NOT NULL,
    return_to_website_link  TEXT,
    end_date                INTEGER,
    currency                TEXT NOT NULL,
    total_amount            INTEGER NOT NULL,
    price_per_unit          INTEGER,
    quantity                INTEGER,
    interval_type           TEXT NOT NULL CHECK (interval_type IN ('Daily', 'Weekly', 'Monthly', 'Annually')),
    interval_count          INTEGER NOT NULL,
    charge_emitter_queue    TEXT,
    recurring_attempts      INTEGER NOT NULL,
    status                  TEXT NOT NULL CHECK (status IN ('Incomplete', 'Expired', 'Active', 'PastDue', 'Unpaid', 'Canceled', 'Completed')),
    current_period_start    INTEGER,
    current_period_end      INTEGER,
    credit_balance          INTEGER NOT NULL,
    dunning_failed_at       INTEGER,
    dunning_retries         INTEGER NOT NULL,
    next_action_at          INTEGER,
    version                 INTEGER NOT NULL,
    created_at              INTEGER NOT NULL,
    updated_at              INTEGER NOT NULL,
    canceled_at             INTEGER,
    UNIQUE (customer_id, order_id)
);
CREATE INDEX memberships_due ON memberships (next_action_at) WHERE next_action_at IS NOT NULL;
CREATE INDEX memberships_by_merchant_due ON memberships (merchant_id, next_action_at) WHERE next_action_at IS NOT NULL;

-- billing_key makes "one invoice per period" a constraint: 'first', 'period:<start>', 'proration:<n>'.
CREATE TABLE invoices (
    id              INTEGER PRIMARY KEY,
    merchant_id     INTEGER NOT NULL REFERENCES merchants (id),
    membership_id   INTEGER NOT NULL REFERENCES memberships (id),
    invoice_key     TEXT NOT NULL UNIQUE,
    billing_key     TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('first', 'renewal', 'proration')),
    status          TEXT NOT NULL CHECK (status IN ('Draft', 'Open', 'Paid', 'Void', 'Uncollectible')),
    currency        TEXT NOT NULL,
    period_start    INTEGER,
    period_end      INTEGER,
    subtotal        INTEGER NOT NULL,
    credit_applied  INTEGER NOT NULL,
    amount_due      INTEGER NOT NULL,
    amount_paid     INTEGER NOT NULL,
    lines           TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    paid_at         INTEGER,
    voided_at       INTEGER,
    UNIQUE (membership_id, billing_key)
);
CREATE INDEX invoices_by_membership ON invoices (membership_id, id);

-- One row per attempt to move money. The idempotency key goes to the processor, so an attempt
-- whose answer was lost (a crash before commit) is asked again, never charged again.
CREATE TABLE charges (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    membership_id       INTEGER NOT NULL REFERENCES memberships (id),
    invoice_id          INTEGER NOT NULL REFERENCES invoices (id),
    idempotency_key     TEXT NOT NULL UNIQUE,
    kind                TEXT NOT NULL CHECK (kind IN ('first', 'renewal', 'retry', 'proration')),
    recurring_ordinal   INTEGER,
    directive           TEXT,
    amount              INTEGER NOT NULL,
    currency            TEXT NOT NULL,
    payment_method_id   INTEGER NOT NULL REFERENCES payment_methods (id),
    status              TEXT NOT NULL CHECK (status IN ('Pending', 'Success', 'Rejected', 'Failed')),
    decline_code        TEXT,
    decline_reason      TEXT,
    processor_reference TEXT,
    pending_update      TEXT,
    created_at          INTEGER NOT NULL,
    completed_at        INTEGER
);
CREATE INDEX charges_pending ON charges (created_at) WHERE status = 'Pending';
CREATE INDEX charges_by_invoice ON charges (invoice_id, id);

-- Webhook outbox: written in the same transaction as the change it reports.
CREATE TABLE events (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    membership_id       INTEGER REFERENCES memberships (id),
    action_id           TEXT NOT NULL UNIQUE,
    action              TEXT NOT NULL,
    order_id            TEXT NOT NULL,
    webhook_url         TEXT NOT NULL,
    payload             TEXT NOT NULL,
    status              TEXT NOT NULL CHECK (status IN ('Pending', 'Delivered', 'Undeliverable')),
    attempts            INTEGER NOT NULL,
    next_attempt_at     INTEGER,
    created_at          INTEGER NOT NULL
);
CREATE INDEX events_due ON events (next_attempt_at) WHERE status = 'Pending';
CREATE INDEX events_by_membership ON events (membership_id, id);

-- E-mail outbox: rendered when the change happens, sent by the mailer.
CREATE TABLE emails (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    customer_id         INTEGER NOT NULL REFERENCES customers (id),
    kind                TEXT NOT NULL CHECK (kind IN ('receipt', 'invoice', 'payment_failed', 'canceled')),
    to_address          TEXT NOT NULL,
    subject             TEXT NOT NULL,
    text_body           TEXT NOT NULL,
    html_body           TEXT NOT NULL,
    status              TEXT NOT NULL CHECK (status IN ('Pending', 'Sent', 'Failed')),
    attempts            INTEGER NOT NULL,
    next_attempt_at     INTEGER,
    created_at          INTEGER NOT NULL,
    sent_at             INTEGER
);
CREATE INDEX emails_due ON emails (next_attempt_at) WHERE status = 'Pending';

-- A sandbox merchant's frozen time, once it has advanced its test clock.
CREATE TABLE test_clocks (
    merchant_id     INTEGER PRIMARY KEY REFERENCES merchants (id),
    now             INTEGER NOT NULL
);

-- The built-in sandbox processor's vault and ledger (DESIGN §7). It plays an outside processor:
-- it keeps a token and the test card's behaviour, never the card number.
CREATE TABLE sandbox_cards (
    token           TEXT PRIMARY KEY,
    merchant_id     INTEGER NOT NULL REFERENCES merchants (id),
    behaviour       TEXT NOT NULL,
    created_at      INTEGER NOT NULL
);

-- Charges, refunds and payouts, each answered once per idempotency key.
CREATE TABLE sandbox_charges (
    idempotency_key TEXT PRIMARY KEY,
    merchant_id     INTEGER NOT NULL REFERENCES merchants (id),
    kind            TEXT NOT NULL CHECK (kind IN ('charge', 'refund', 'payout')),
    refunded_reference TEXT,
    token           TEXT NOT NULL,
    amount          INTEGER NOT NULL,
    currency        TEXT NOT NULL,
    outcome         TEXT NOT NULL,
    decline_code    TEXT,
    decline_reason  TEXT,
    reference       TEXT NOT NULL UNIQUE,
    created_at      INTEGER NOT NULL
);

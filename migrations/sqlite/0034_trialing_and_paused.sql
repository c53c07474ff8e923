-- Two membership statuses beyond the interface document (DESIGN §15): Trialing (card saved, first
-- charge at trialEnd) and Paused (no charges, no dunning). And the e-mail three days before a
-- trial ends. SQLite changes a CHECK only by rebuilding the table; recur runs SQLite migrations
-- with foreign-key enforcement off and checks every reference afterwards (`Store::migrate`), so
-- the tables that reference memberships keep pointing at the rebuilt one.
CREATE TABLE memberships_new (
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
    status                  TEXT NOT NULL CHECK (status IN ('Incomplete', 'Expired', 'Active',
                                'PastDue', 'Unpaid', 'Canceled', 'Completed', 'Trialing',
                                'Paused')),
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
    tax_rates               TEXT NOT NULL DEFAULT '[]',
    UNIQUE (customer_id, order_id)
);
INSERT INTO memberships_new (id, merchant_id, customer_id, membership_key, order_id,
    order_description, subscription_name, metadata, webhook_url, return_to_website_link, end_date,
    currency, total_amount, price_per_unit, quantity, interval_type, interval_count,
    charge_emitter_queue, recurring_attempts, status, current_period_start, current_period_end,
    credit_balance, dunning_failed_at, dunning_retries, next_action_at, version, created_at,
    updated_at, canceled_at, tax_rates)
SELECT id, merchant_id, customer_id, membership_key, order_id, order_description,
    subscription_name, metadata, webhook_url, return_to_website_link, end_date, currency,
    total_amount, price_per_unit, quantity, interval_type, interval_count, charge_emitter_queue,
    recurring_attempts, status, current_period_start, current_period_end, credit_balance,
    dunning_failed_at, dunning_retries, next_action_at, version, created_at, updated_at,
    canceled_at, tax_rates
FROM memberships;
DROP TABLE memberships;
ALTER TABLE memberships_new RENAME TO memberships;
CREATE INDEX memberships_due ON memberships (next_action_at, id) WHERE next_action_at IS NOT NULL;
CREATE INDEX memberships_by_merchant_due ON memberships (merchant_id, next_action_at, id)
    WHERE next_action_at IS NOT NULL;
CREATE INDEX memberships_by_merchant ON memberships (merchant_id, id);
CREATE INDEX memberships_by_status ON memberships (merchant_id, status, id);
CREATE INDEX memberships_by_customer ON memberships (customer_id, id);
CREATE INDEX memberships_recurring ON memberships
    (merchant_id, status, currency, interval_type, interval_count, total_amount);

CREATE TABLE emails_new (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    customer_id         INTEGER REFERENCES customers (id),
    kind                TEXT NOT NULL CHECK (kind IN ('receipt', 'invoice', 'payment_failed',
                            'canceled', 'endpoint_disabled', 'credit_note', 'trial_will_end')),
    to_address          TEXT NOT NULL,
    subject             TEXT NOT NULL,
    text_body           TEXT NOT NULL,
    html_body           TEXT NOT NULL,
    status              TEXT NOT NULL CHECK (status IN ('Pending', 'Sent', 'Failed')),
    attempts            INTEGER NOT NULL,
    next_attempt_at     INTEGER,
    created_at          INTEGER NOT NULL,
    sent_at             INTEGER,
    message_id          TEXT,
    lease_until         INTEGER,
    last_error          TEXT,
    link_session        TEXT,
    reply_to            TEXT
);
INSERT INTO emails_new (id, merchant_id, customer_id, kind, to_address, subject, text_body,
    html_body, status, attempts, next_attempt_at, created_at, sent_at, message_id, lease_until,
    last_error, link_session, reply_to)
SELECT id, merchant_id, customer_id, kind, to_address, subject, text_body, html_body, status,
    attempts, next_attempt_at, created_at, sent_at, message_id, lease_until, last_error,
    link_session, reply_to
FROM emails;
DROP TABLE emails;
ALTER TABLE emails_new RENAME TO emails;
CREATE INDEX emails_due ON emails (next_attempt_at, id) WHERE status = 'Pending';

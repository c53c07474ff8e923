-- A payment method is a card or a SEPA Direct Debit mandate (DESIGN §18).
ALTER TABLE payment_methods ADD COLUMN method_type TEXT NOT NULL DEFAULT 'card'
    CHECK (method_type IN ('card', 'sepa_debit'));

-- A mandate: the payment method's SEPA details. The debtor's IBAN is sealed with the server
-- key (its last four are the payment method's last4); the reference is unique per merchant;
-- the consent is kept with its time, client address and user agent when it was given on a
-- hosted page. A revoked mandate takes no more debits.
CREATE TABLE sepa_mandates (
    payment_method_id   INTEGER PRIMARY KEY REFERENCES payment_methods (id),
    merchant_id         INTEGER NOT NULL,
    processor_id        INTEGER NOT NULL,
    mandate_reference   TEXT NOT NULL,
    account_holder      TEXT NOT NULL,
    iban_sealed         TEXT NOT NULL,
    bic                 TEXT,
    signed_at           INTEGER NOT NULL,
    consent_address     TEXT,
    consent_user_agent  TEXT,
    revoked_at          INTEGER,
    FOREIGN KEY (merchant_id, processor_id)
        REFERENCES payment_processors (merchant_id, processor_id)
);
CREATE UNIQUE INDEX sepa_mandates_reference ON sepa_mandates (merchant_id, mandate_reference);

-- A collection file: every Pending debit of one SEPA processor due by its collection date.
-- The document is kept as made, so that a download is the file the bank was given.
CREATE TABLE sepa_batches (
    id                  INTEGER PRIMARY KEY,
    batch_key           TEXT NOT NULL UNIQUE,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    processor_id        INTEGER NOT NULL,
    collection_date     TEXT NOT NULL,
    message_id          TEXT NOT NULL,
    debit_count         INTEGER NOT NULL,
    total               INTEGER NOT NULL,
    document            TEXT NOT NULL,
    created_at          INTEGER NOT NULL,
    FOREIGN KEY (merchant_id, processor_id)
        REFERENCES payment_processors (merchant_id, processor_id)
);
CREATE INDEX sepa_batches_by_merchant ON sepa_batches (merchant_id, id);

-- A charge of a mandate is a debit: pre-notified for its collection date, Pending until a
-- collection file takes it (one batch only), paid on the batch's collection date, and reversed
-- when the bank returns it (the ISO reason code kept).
CREATE TABLE sepa_debits (
    charge_id           INTEGER PRIMARY KEY REFERENCES charges (id),
    merchant_id         INTEGER NOT NULL,
    processor_id        INTEGER NOT NULL,
    payment_method_id   INTEGER NOT NULL REFERENCES payment_methods (id),
    collection_date     TEXT NOT NULL,
    end_to_end_id       TEXT NOT NULL,
    notified_at         INTEGER NOT NULL,
    batch_id            INTEGER REFERENCES sepa_batches (id),
    sequence            TEXT CHECK (sequence IN ('FRST', 'RCUR')),
    collected_at        INTEGER,
    returned_at         INTEGER,
    return_code         TEXT
);
CREATE UNIQUE INDEX sepa_debits_end_to_end ON sepa_debits (end_to_end_id);
CREATE INDEX sepa_debits_unbatched ON sepa_debits (merchant_id, processor_id, collection_date)
    WHERE batch_id IS NULL;
CREATE INDEX sepa_debits_uncollected ON sepa_debits (batch_id)
    WHERE batch_id IS NOT NULL AND collected_at IS NULL;
CREATE INDEX sepa_debits_of_mandate ON sepa_debits (payment_method_id, batch_id);

-- The pre-notification e-mail of a debit.
CREATE TABLE emails_new (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    customer_id         INTEGER REFERENCES customers (id),
    kind                TEXT NOT NULL CHECK (kind IN ('receipt', 'invoice', 'payment_failed',
                            'canceled', 'endpoint_disabled', 'credit_note', 'trial_will_end',
                            'debit_notice')),
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

-- SEPA Direct Debit from the merchant's own bank account (DESIGN §18). A SEPA processor is one
-- more connected processor of the merchant's set (`payment_processors`, connector 'sepa', kind
-- 'debit', ids from 301 on like Stripe accounts); its creditor details live beside it.
ALTER TABLE payment_processors DROP CONSTRAINT payment_processors_kind_check;
ALTER TABLE payment_processors ADD CONSTRAINT payment_processors_kind_check
    CHECK (kind IN ('card', 'alternative', 'debit'));
ALTER TABLE payment_processors DROP CONSTRAINT payment_processors_connector_check;
ALTER TABLE payment_processors ADD CONSTRAINT payment_processors_connector_check
    CHECK (connector IN ('sandbox', 'stripe', 'sepa'));

-- The creditor a SEPA processor collects for: its SEPA creditor identifier, the name and
-- collection account (IBAN, optional BIC) the collection files carry, and how many days
-- before a collection the customer is notified of it.
CREATE TABLE sepa_accounts (
    merchant_id     BIGINT NOT NULL,
    processor_id    BIGINT NOT NULL,
    creditor_id     TEXT NOT NULL,
    creditor_name   TEXT NOT NULL,
    iban            TEXT NOT NULL,
    bic             TEXT,
    lead_days       BIGINT NOT NULL CHECK (lead_days BETWEEN 1 AND 14),
    PRIMARY KEY (merchant_id, processor_id),
    FOREIGN KEY (merchant_id, processor_id)
        REFERENCES payment_processors (merchant_id, processor_id) ON DELETE CASCADE
);

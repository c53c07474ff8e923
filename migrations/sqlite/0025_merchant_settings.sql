-- A merchant's settings (DESIGN §13: GET|PUT /merchant/settings), one row per merchant, written
-- by its first PUT: no row means every field unset. Each column is NULL while unset; the API
-- shows displayName's and invoicePrefix's defaults (the merchant's name, INV) in their place.
-- Values are stored as the API's rules checked and normalized them.
CREATE TABLE merchant_settings (
    merchant_id     INTEGER PRIMARY KEY REFERENCES merchants (id),
    display_name    TEXT,
    legal_name      TEXT,
    address         TEXT,
    country         TEXT,
    tax_id          TEXT,
    support_email   TEXT,
    brand_color     TEXT,
    logo_url        TEXT,
    invoice_prefix  TEXT,
    updated_at      INTEGER NOT NULL
);

-- The Reply-To of a customer e-mail: the merchant's support e-mail when the e-mail was written,
-- as its bodies name it.
ALTER TABLE emails ADD COLUMN reply_to TEXT;

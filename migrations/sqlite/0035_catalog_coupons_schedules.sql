-- DESIGN §15: the catalog (products and their prices), coupons, and what a membership carries
-- for them and for trials, pauses and changes scheduled for its next period.

-- A merchant's products, and their prices. A price's terms never change once created (archive
-- it with `active` and create another); a membership made from one copies its terms.
CREATE TABLE products (
    id              INTEGER PRIMARY KEY,
    merchant_id     INTEGER NOT NULL REFERENCES merchants (id),
    product_key     TEXT NOT NULL UNIQUE,
    name            TEXT NOT NULL,
    description     TEXT,
    active          INTEGER NOT NULL CHECK (active IN (0, 1)),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
-- The merchant's list, newest first, and the list of its active or archived products.
CREATE INDEX products_by_merchant ON products (merchant_id, id);
CREATE INDEX products_by_active ON products (merchant_id, active, id);

CREATE TABLE prices (
    id              INTEGER PRIMARY KEY,
    merchant_id     INTEGER NOT NULL REFERENCES merchants (id),
    product_id      INTEGER NOT NULL REFERENCES products (id),
    price_key       TEXT NOT NULL UNIQUE,
    currency        TEXT NOT NULL,
    unit_amount     INTEGER NOT NULL,
    interval_type   TEXT NOT NULL CHECK (interval_type IN ('Daily', 'Weekly', 'Monthly', 'Annually')),
    interval_count  INTEGER NOT NULL,
    trial_days      INTEGER,
    active          INTEGER NOT NULL CHECK (active IN (0, 1)),
    created_at      INTEGER NOT NULL
);
-- The merchant's list, newest first; its active or archived prices; one product's prices.
CREATE INDEX prices_by_merchant ON prices (merchant_id, id);
CREATE INDEX prices_by_active ON prices (merchant_id, active, id);
CREATE INDEX prices_by_product ON prices (merchant_id, product_id, id);

-- Coupons. `code` is stored uppercase and unique per merchant (codes match in any letter case);
-- `percent_off` is the checked decimal as text, never a float. `times_redeemed` is raised by
-- the one statement that redeems, which also checks the limit, the expiry and `active`.
CREATE TABLE coupons (
    id                  INTEGER PRIMARY KEY,
    merchant_id         INTEGER NOT NULL REFERENCES merchants (id),
    coupon_key          TEXT NOT NULL UNIQUE,
    code                TEXT NOT NULL,
    percent_off         TEXT,
    amount_off          INTEGER,
    currency            TEXT,
    duration            TEXT NOT NULL CHECK (duration IN ('once', 'repeating', 'forever')),
    duration_in_cycles  INTEGER,
    max_redemptions     INTEGER,
    times_redeemed      INTEGER NOT NULL DEFAULT 0,
    expires_at          INTEGER,
    active              INTEGER NOT NULL CHECK (active IN (0, 1)),
    created_at          INTEGER NOT NULL,
    UNIQUE (merchant_id, code),
    CHECK ((percent_off IS NULL) <> (amount_off IS NULL)),
    CHECK ((amount_off IS NULL) = (currency IS NULL)),
    CHECK ((duration = 'repeating') = (duration_in_cycles IS NOT NULL))
);
CREATE INDEX coupons_by_merchant ON coupons (merchant_id, id);

-- The membership's side. `price_key`: the catalog price it was made from (null for inline
-- pricingInfo). `trial_days`: the trial it starts at checkout; `trial_end` once started;
-- `trial_notice_at`: when SUBSCRIPTION_TRIAL_WILL_END is due (null once sent). `discount`: its
-- coupon's terms and the cycles left (JSON, `recur_domain::coupon::Discount`);
-- `period_discount`: what the discount took off the current period's invoice, which prices the
-- period's unused time. `resume_at`: when a Paused membership resumes by itself.
-- `scheduled_change`: terms applied by the next renewal (JSON,
-- `recur_domain::membership::ScheduledChange`).
ALTER TABLE memberships ADD COLUMN price_key TEXT;
ALTER TABLE memberships ADD COLUMN trial_days INTEGER;
ALTER TABLE memberships ADD COLUMN trial_end INTEGER;
ALTER TABLE memberships ADD COLUMN trial_notice_at INTEGER;
ALTER TABLE memberships ADD COLUMN discount TEXT;
ALTER TABLE memberships ADD COLUMN period_discount INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memberships ADD COLUMN resume_at INTEGER;
ALTER TABLE memberships ADD COLUMN scheduled_change TEXT;

-- The coupon an invoice's discount came from (JSON, `recur_domain::coupon::AppliedCoupon`).
ALTER TABLE invoices ADD COLUMN coupon TEXT;

-- Whether the portal's price switch applies at once (prorated) or at the next renewal.
ALTER TABLE merchant_settings ADD COLUMN portal_plan_change TEXT;

-- DESIGN §19: usage-based billing. Meters, metered prices, the metered prices a membership
-- carries, usage events (each transaction id once per merchant, forever) and the per-period
-- totals every accepted event is added to as it arrives, so that an invoice reads totals and
-- never events.

-- A meter: what a merchant counts (`code`, unique per merchant, never changed) and how a
-- period's events add up. `property` names the event property it reads (none for `count`).
CREATE TABLE meters (
    id              INTEGER PRIMARY KEY,
    merchant_id     INTEGER NOT NULL REFERENCES merchants (id),
    meter_key       TEXT NOT NULL UNIQUE,
    code            TEXT NOT NULL,
    name            TEXT NOT NULL,
    aggregation     TEXT NOT NULL
        CHECK (aggregation IN ('count', 'sum', 'max', 'unique_count', 'latest')),
    property        TEXT,
    active          INTEGER NOT NULL CHECK (active IN (0, 1)),
    created_at      INTEGER NOT NULL,
    UNIQUE (merchant_id, code),
    CHECK ((aggregation = 'count') = (property IS NULL))
);
CREATE INDEX meters_by_merchant ON meters (merchant_id, id);

-- A metered price bills a meter's usage in arrears: `metered` is its pricing
-- (JSON, `recur_domain::usage::pricing::MeteredPricing`); `unit_amount` is 0 for it. (SQLite adds no
-- table CHECK to an existing table; the catalog service writes both or neither.)
ALTER TABLE prices ADD COLUMN meter_id INTEGER REFERENCES meters (id);
ALTER TABLE prices ADD COLUMN metered TEXT;

-- The metered prices a membership carries, as they were when given (JSON, a list of
-- `recur_domain::usage::MeteredTerm`, one per meter); null for none.
ALTER TABLE memberships ADD COLUMN metered_prices TEXT;

-- Every accepted usage event, keyed by its transaction id: the key is what makes an id count
-- once per merchant, and it is the table's only index. `period_start` is the period whose
-- totals it was added to; `value` the property read (a decimal, or the unique key).
CREATE TABLE usage_events (
    merchant_id     INTEGER NOT NULL,
    transaction_id  TEXT NOT NULL,
    membership_id   INTEGER NOT NULL,
    meter_id        INTEGER NOT NULL,
    period_start    INTEGER NOT NULL,
    occurred_at     INTEGER NOT NULL,
    value           TEXT,
    received_at     INTEGER NOT NULL,
    PRIMARY KEY (merchant_id, transaction_id)
) WITHOUT ROWID;

-- A meter's usage of one membership period so far. Decimals are exact decimal text. `billed`
-- is set, in the invoicing transaction, when an invoice has billed the period: the period then
-- takes no more events.
CREATE TABLE usage_totals (
    membership_id   INTEGER NOT NULL,
    meter_id        INTEGER NOT NULL,
    period_start    INTEGER NOT NULL,
    event_count     INTEGER NOT NULL,
    value_sum       TEXT NOT NULL,
    value_max       TEXT,
    latest_at       INTEGER,
    latest_value    TEXT,
    unique_count    INTEGER NOT NULL,
    billed          INTEGER NOT NULL CHECK (billed IN (0, 1)),
    PRIMARY KEY (membership_id, meter_id, period_start)
) WITHOUT ROWID;

-- The distinct values a `unique_count` meter has seen in a period.
CREATE TABLE usage_unique_values (
    membership_id   INTEGER NOT NULL,
    meter_id        INTEGER NOT NULL,
    period_start    INTEGER NOT NULL,
    value_key       TEXT NOT NULL,
    PRIMARY KEY (membership_id, meter_id, period_start, value_key)
) WITHOUT ROWID;

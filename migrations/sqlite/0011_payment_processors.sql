-- The payment processors a merchant's cashier offers. Every merchant gets the built-in sandbox
-- set: two card gateways (cascading from the first to the second on a soft decline) and two
-- alternative methods.
CREATE TABLE payment_processors (
    merchant_id     INTEGER NOT NULL REFERENCES merchants (id),
    processor_id    INTEGER NOT NULL,
    processor_key   TEXT NOT NULL,
    name            TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('card', 'alternative')),
    position        INTEGER NOT NULL,
    PRIMARY KEY (merchant_id, processor_id)
);

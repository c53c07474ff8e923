-- Lists and search (DESIGN §10): every list is read newest first, `id DESC` within one merchant,
-- a page at a time from where the previous one ended (keyset pagination). Each list and each
-- filter has an index that holds its rows in that order, so a page reads its own rows and no
-- others, whatever the table's size.
--
-- `q` searches customers by the prefix of their e-mail, first or last name, in any letter case.
-- The e-mail's key is `email_identity` (the address lowercased, unique per merchant); the names
-- get keys of their own: lowercased by recur (Unicode case folding, the same on both databases)
-- and cut to their first 100 characters, so an index entry stays small whatever the name's
-- length. Rows that exist already are keyed here with the database's lower().
--
-- A prefix is searched as a range (`key >= prefix AND key < the next string after every string
-- that starts with it`), which is only right in code-point order: the search keys use the "C"
-- collation, the order SQLite's BINARY collation has, whatever the database's default.
ALTER TABLE customers ALTER COLUMN email_identity TYPE TEXT COLLATE "C";
ALTER TABLE customers ADD COLUMN first_name_search TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE customers ADD COLUMN last_name_search TEXT COLLATE "C" NOT NULL DEFAULT '';
UPDATE customers SET first_name_search = substr(lower(first_name), 1, 100),
    last_name_search = substr(lower(last_name), 1, 100);

CREATE INDEX customers_by_merchant ON customers (merchant_id, id);
CREATE INDEX customers_by_first_name ON customers (merchant_id, first_name_search, id);
CREATE INDEX customers_by_last_name ON customers (merchant_id, last_name_search, id);

CREATE INDEX memberships_by_merchant ON memberships (merchant_id, id);
CREATE INDEX memberships_by_status ON memberships (merchant_id, status, id);
CREATE INDEX memberships_by_customer ON memberships (customer_id, id);

-- Invoices of one membership: invoices_by_membership (membership_id, id).
CREATE INDEX invoices_by_merchant ON invoices (merchant_id, id);
CREATE INDEX invoices_by_status ON invoices (merchant_id, status, id);

-- Events of one membership: events_by_membership (membership_id, id).
CREATE INDEX events_by_merchant ON events (merchant_id, id);
CREATE INDEX events_by_action ON events (merchant_id, action, id);
CREATE INDEX events_by_status ON events (merchant_id, status, id);

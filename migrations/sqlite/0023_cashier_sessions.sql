-- The hosted payment page is "the cashier" in every layer: its sessions' table takes the name.
-- (SQLite rewrites the foreign key of `cashier_transactions` to the new name.)
ALTER TABLE hosted_page_sessions RENAME TO cashier_sessions;
DROP INDEX hosted_page_sessions_order;
CREATE INDEX cashier_sessions_order ON cashier_sessions (merchant_id, order_id, expires_at);

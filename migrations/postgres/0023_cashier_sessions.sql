-- The hosted payment page is "the cashier" in every layer: its sessions' table takes the name.
ALTER TABLE hosted_page_sessions RENAME TO cashier_sessions;
ALTER INDEX hosted_page_sessions_order RENAME TO cashier_sessions_order;

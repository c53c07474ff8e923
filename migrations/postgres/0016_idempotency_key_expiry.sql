-- Remembered responses are purged once they are older than the 24-hour retention, oldest first,
-- a batch at a time: the index lets each batch read just the rows it deletes.
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);

-- The webhook dispatcher and the mailer claim due rows in (next_attempt_at, id) order, a batch at
-- a time. Rows written by one transaction (a renewal batch, a bulk import) share their
-- next_attempt_at; with the id in the index a claim reads its batch in index order instead of
-- sorting every due row, so its cost does not grow with the backlog.
DROP INDEX events_due;
CREATE INDEX events_due ON events (next_attempt_at, id) WHERE status = 'Pending';
DROP INDEX emails_due;
CREATE INDEX emails_due ON emails (next_attempt_at, id) WHERE status = 'Pending';

-- The engine claims due memberships in (next_action_at, id) order, a batch at a time. With the
-- id in the index a claim reads its batch in index order instead of sorting every due row, so
-- its cost does not grow with how many memberships fall due together.
DROP INDEX memberships_due;
CREATE INDEX memberships_due ON memberships (next_action_at, id) WHERE next_action_at IS NOT NULL;
DROP INDEX memberships_by_merchant_due;
CREATE INDEX memberships_by_merchant_due ON memberships (merchant_id, next_action_at, id) WHERE next_action_at IS NOT NULL;

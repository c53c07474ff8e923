-- Ended dashboard sessions are deleted by housekeeping, oldest first across all merchants
-- (DESIGN §13: a session ends after 30 minutes without a request), no longer at each login.
DROP INDEX dashboard_sessions_by_merchant;
CREATE INDEX dashboard_sessions_by_seen_at ON dashboard_sessions (seen_at);

-- The pay-now link of a "payment failed" e-mail: the key of its checkout session. The stored
-- bodies hold a marker in place of the link; the mailer derives the link's token from this key
-- and the server key as it sends, so the outbox never holds the token.
ALTER TABLE emails ADD COLUMN link_session TEXT;

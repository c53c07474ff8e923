-- A charge the customer made on a hosted checkout page (first payment or pay-now): the UUID of
-- its checkout session (the notification's `CascadingInfo.SessionId`) and the customer's address
-- as the page saw it (`ClientIP`). NULL for the attempts the engine or the API starts
-- (renewals, retries, prorations, the sandbox pay helper).
ALTER TABLE charges ADD COLUMN page_session_id TEXT;
ALTER TABLE charges ADD COLUMN client_ip TEXT;

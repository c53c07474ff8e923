-- One charge attempt in flight per membership: every path that charges a membership (first
-- payment, pay-now, renewal, dunning retry, proration) writes its `Pending` attempt under this
-- index, so a second one while the first awaits the processor is refused by the database
-- itself, across requests and processes.
CREATE UNIQUE INDEX charges_in_flight ON charges (membership_id) WHERE status = 'Pending';

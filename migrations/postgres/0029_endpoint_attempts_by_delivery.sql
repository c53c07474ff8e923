-- A delivery's attempts, for the timeline of a membership's events in the dashboard (DESIGN §13:
-- each event with every attempt to deliver it, to its own URL and to each endpoint).
CREATE INDEX endpoint_attempts_by_delivery ON endpoint_attempts (delivery_id, id);

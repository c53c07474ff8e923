-- A test-clock merchant's due webhook deliveries (DESIGN §7): its advance claims them a few at a
-- time, earliest first, from the merchant's own queue. Without these indexes each claim read
-- every pending event of the merchant through events_by_status and sorted them, so an advance
-- that delivered N events cost O(N²).
CREATE INDEX events_due_by_merchant ON events (merchant_id, next_attempt_at, id)
    WHERE status = 'Pending';
CREATE INDEX endpoint_deliveries_due_by_merchant
    ON endpoint_deliveries (merchant_id, next_attempt_at, id) WHERE status = 'Pending';

-- An advance of a test clock that has not caught up yet: the real time (Unix microseconds) of
-- its owner's last sign of life, NULL once every action due by `now` has run. The billing
-- worker of any process resumes a catch-up whose owner fell silent (killed mid-advance).
ALTER TABLE test_clocks ADD COLUMN catching_up_since BIGINT;
CREATE INDEX test_clocks_catching_up ON test_clocks (catching_up_since)
    WHERE catching_up_since IS NOT NULL;

//! Which memberships a run of the billing engine looks at, and on whose time.

/// Which memberships a run looks at, and at what time the actions are taken.
#[derive(Debug, Clone, Copy)]
pub enum Scope {
    /// Every merchant on real time: actions happen now.
    RealTime,
    /// One merchant's test clock: each action happens at the time it was due, so a jump of a
    /// year replays the year in order.
    TestClock(i64),
}

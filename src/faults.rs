//! Failures of background work, logged once per change of state.

/// The background tasks that are failing: each failure is logged when it
/// starts and its end when it ends, not on every retry (a full disk would
/// otherwise log several errors a second).
#[derive(Default)]
pub struct Faults(std::collections::HashSet<&'static str>);

impl Faults {
    /// Notes how `what` went; true if it succeeded.
    pub fn note<E: std::fmt::Display>(&mut self, what: &'static str, r: Result<(), E>) -> bool {
        match r {
            Ok(()) => {
                if self.0.remove(what) {
                    tracing::info!("{what} works again");
                }
                true
            }
            Err(e) => {
                if self.0.insert(what) {
                    tracing::error!("{what} failed: {e} (logged again once it works)");
                }
                false
            }
        }
    }
}

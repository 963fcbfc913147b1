//! Realistic, clustered dev notes ("the payment webhook keeps timing out
//! because of rate limits; logs attached (#41)") and paraphrased queries:
//! `benches/semantic.rs` and `benches/scale.rs`. A note is one of
//! `TEMPLATES` sentences and a ticket number.

pub const SUBJECTS: &[&str] = &[
    "the deploy",
    "the login page",
    "the database migration",
    "the billing service",
    "the search index",
    "the mobile app",
    "the nightly backup",
    "the CI pipeline",
    "the payment webhook",
    "the cache layer",
    "the onboarding flow",
    "the metrics dashboard",
    "the email digest",
    "the API gateway",
    "the auth token refresh",
    "the image resizer",
    "the export job",
    "the feature flag service",
    "the staging cluster",
    "the docs site",
];
pub const PREDICATES: &[&str] = &[
    "failed again because of",
    "is slow today due to",
    "was fixed after",
    "needs a review from",
    "got a new owner:",
    "is blocked on",
    "passed all checks despite",
    "was rolled back after",
    "keeps timing out because of",
    "should be rewritten to avoid",
    "broke in production after",
    "is waiting on",
    "needs more tests around",
    "was migrated ahead of",
    "looks healthy after",
];
pub const TAILS: &[&str] = &[
    "Alice",
    "the security team",
    "a bad config",
    "the holiday freeze",
    "missing credentials",
    "a race condition",
    "the new release",
    "disk pressure",
    "an expired certificate",
    "network flakiness",
    "a schema change",
    "the vendor outage",
    "a memory leak",
    "the quarterly audit",
    "an upstream bug",
    "rate limits",
    "a typo in the env file",
    "Bob's refactor",
    "the load test",
    "DNS propagation",
];
pub const CLAUSES: &[&str] = &[
    "",
    "; see the incident notes",
    "; follow up tomorrow",
    "; customer impact unclear",
    "; agent retried twice",
    "; logs attached",
    "; low priority",
    "; needs eyes from ops",
];
pub const QUERIES: &[&str] = &[
    "problems with the payment system",
    "who is reviewing the database work",
    "certificate renewal issues",
    "phone application performance",
    "backups over the holidays",
    "credential errors when signing in",
    "continuous integration is red",
    "memory growing in a job",
    "outage at a third-party provider",
    "documentation website changes",
];

/// How many distinct sentences a note can be (before its number).
pub const TEMPLATES: usize = SUBJECTS.len() * PREDICATES.len() * TAILS.len() * CLAUSES.len();

/// The `t`-th sentence, `t < TEMPLATES`.
pub fn template(t: usize) -> String {
    format!(
        "{} {} {}{}",
        SUBJECTS[t % SUBJECTS.len()],
        PREDICATES[t / SUBJECTS.len() % PREDICATES.len()],
        TAILS[t / (SUBJECTS.len() * PREDICATES.len()) % TAILS.len()],
        CLAUSES[t / (SUBJECTS.len() * PREDICATES.len() * TAILS.len()) % CLAUSES.len()],
    )
}

/// A note: a sentence and its ticket number.
pub fn numbered(t: usize, number: u32) -> String {
    format!("{} (#{number})", template(t))
}

pub fn note(rng: &mut fastrand::Rng) -> String {
    numbered(rng.usize(..TEMPLATES), rng.u32(..100_000))
}

//! Test notes as agents write them.
#![allow(dead_code)]

/// Notes as agents pile them up: a few templates, thousands of near-copies.
pub fn near_duplicates(n: usize) -> Vec<String> {
    let services = [
        "auth-service",
        "billing-api",
        "search-api",
        "checkout",
        "gateway",
        "ledger",
        "scheduler",
        "export-job",
        "catalog",
        "audit-log",
    ];
    let failures = ["fails", "times out", "leaks memory", "crashes", "is slow"];
    let when = ["after the deploy", "under load", "at night", "on retry"];
    let mut rng = fastrand::Rng::with_seed(5);
    (0..n)
        .map(|_| {
            format!(
                "{} {} {}; ticket {}",
                services[rng.usize(..services.len())],
                failures[rng.usize(..failures.len())],
                when[rng.usize(..when.len())],
                rng.u32(1000..100_000)
            )
        })
        .collect()
}

pub const QUERIES: &[&str] = &[
    "login service broken since release",
    "payments api slow when busy",
    "search is down at night",
    "memory keeps growing in the ledger",
    "the scheduler crashed again",
    "exports time out",
    "catalog errors after deployment",
    "audit logging problems on retries",
    "gateway dies under heavy traffic",
    "billing failures",
    "checkout leaks memory",
    "what breaks after a deploy",
];

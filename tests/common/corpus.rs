//! What the semantic suites share: a corpus of realistic notes, and the
//! top meaning hit for a query.

use serde_json::json;

use super::ok;

/// 800 distinct, realistic, clustered notes (real embeddings of these have
/// the structure HNSW relies on; random vectors would not).
pub fn corpus() -> Vec<String> {
    let subjects = [
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
    ];
    let predicates = [
        "failed again because of",
        "is slow today due to",
        "was fixed after",
        "needs a review from",
        "got a new owner:",
        "is blocked on",
        "passed all checks despite",
        "was rolled back after",
    ];
    let tails = [
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
    ];
    let mut out = Vec::new();
    for s in subjects {
        for p in predicates {
            for t in tails {
                out.push(format!("{s} {p} {t}"));
            }
        }
    }
    out
}

/// Top semantic hit's content for `query`.
pub async fn best(c: &mut scratchpad::client::Client, query: &str) -> String {
    let r = ok(
        c,
        "search",
        json!({"query": query, "mode": "semantic", "limit": 1}),
    )
    .await;
    r["hits"][0]["entry"]["content"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

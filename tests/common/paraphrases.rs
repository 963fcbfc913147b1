//! A small set of our own: dev-team notes an agent or a person might
//! leave, and for 20 of them a question that means the same but shares no
//! important word with it (tests/semantic.rs; `BENCH_SET=paraphrases` in
//! the locomo bench ranks it next to BM25 and exact vectors).

/// Dev-team notes, and for each of the first ones a question that means the
/// same but shares no important word with it.
pub const PARAPHRASES: &[(&str, &str)] = &[
    (
        "docker login failures",
        "cannot authenticate to the container registry",
    ),
    (
        "how do we make the build quicker",
        "compile times dropped after enabling incremental caching",
    ),
    (
        "database is sluggish",
        "queries against postgres take seconds since the index was dropped",
    ),
    (
        "server keeps crashing overnight",
        "the backend process dies every evening around 11pm",
    ),
    (
        "who owns the release",
        "Maria is responsible for shipping version 2.3",
    ),
    (
        "customer complaints about billing",
        "several users reported being charged twice for their subscription",
    ),
    (
        "tests are flaky",
        "the integration suite fails randomly about one run in five",
    ),
    (
        "we need to rotate secrets",
        "API keys and passwords must be replaced before the audit",
    ),
    (
        "website is down",
        "the landing page returns 502 errors for everyone",
    ),
    (
        "improve search relevance",
        "ranking results better so the right documents come first",
    ),
    (
        "notes from the planning session",
        "summary of what we decided in Tuesday's roadmap discussion",
    ),
    (
        "translate the app into Spanish",
        "localization for users in Mexico and Spain",
    ),
    (
        "memory leak in the worker",
        "RAM usage of the background job grows until it is killed",
    ),
    (
        "book time off",
        "I will be away on holiday from June 3 to June 14",
    ),
    (
        "GPU not detected",
        "CUDA reports no graphics card available on the training machine",
    ),
    (
        "upgrade dependencies",
        "bump library versions to their latest releases",
    ),
    (
        "encrypt the backups",
        "archived snapshots should be protected with AES before upload",
    ),
    (
        "phone app crashes on launch",
        "mobile client quits immediately after opening on Android",
    ),
    (
        "rate limiting for the API",
        "throttle clients that send too many requests per minute",
    ),
    (
        "write onboarding documentation",
        "a guide to help new hires get started",
    ),
];

pub const DISTRACTORS: &[&str] = &[
    "lunch order for friday is pizza",
    "the cat knocked over the plant",
    "renewed the domain for another year",
    "coffee machine on floor 3 is broken",
    "quarterly revenue grew 12 percent",
    "photos from the Paris trip are uploaded",
    "switch the logo color to dark blue",
    "the office wifi password changed",
    "refactored the parser module into smaller functions",
    "added a dark mode toggle to settings",
    "migrated CI from Jenkins to GitHub Actions",
    "benchmarks show p99 latency of 4 ms",
    "the font on the invoice PDF is too small",
    "bought new chairs for the meeting room",
    "the README has a typo in the install section",
    "rename the variable cfg to config",
    "team offsite is planned for September",
    "interview a candidate for the frontend role on Monday",
    "the printer on the second floor jams",
    "updated the privacy policy text",
    "the chart colors are hard to read",
    "moved the cron job to run hourly",
    "the logo file is missing from the assets folder",
    "added unit tests for the date parser",
    "removed the deprecated v1 endpoints",
    "the staging database was reset",
    "dashboards now show weekly totals",
    "we picked spaces over tabs",
    "sent the contract to legal for review",
    "the demo went well, the client wants a follow-up",
];

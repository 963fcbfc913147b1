//! The data model: pads, entries and the rules every value must satisfy.
//!
//! Validation lives here, next to the types, so that every transport gets the
//! same rules and the same instructive messages. Names and tags are
//! case-folded before they are checked; the store only ever sees valid,
//! normalised values.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::error::{Error, Result};
pub use crate::seal::{NoteRef, SHARED_FROM};

pub const MAX_TAGS: usize = 10;
pub const MAX_TAG_LEN: usize = 32;
pub const MAX_PAD_LEN: usize = 64;
pub const MAX_AUTHOR_LEN: usize = 64;
pub const MAX_META_BYTES: usize = 16 * 1024;
/// The longest time a setting may reach into the future (TTLs, reminders):
/// ten years, so time arithmetic never wraps and a typo cannot make a date
/// in 1970 (which expiry would act on at once).
pub const MAX_FUTURE_SECONDS: i64 = 10 * 365 * 86_400;
/// The most entries a pad's rolling window (`max_entries`) may keep.
pub const MAX_WINDOW_ENTRIES: i64 = 1_000_000_000;
/// The largest export budget, in characters (100 million).
pub const MAX_BUDGET: usize = 100_000_000;
pub const DEFAULT_MAX_CONTENT_CHARS: usize = 4000;
pub const INBOX: &str = "inbox";
/// The key of a question's `meta` naming who besides the person may answer
/// it (`ask`'s `answer_from`).
pub const ANSWER_FROM: &str = "answer_from";
pub const NEEDS_EYES: &str = "needs_eyes";

/// One item on a pad, as it travels on the wire.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Entry {
    pub id: String,
    pub pad: String,
    pub author: String,
    pub kind: Kind,
    pub content: String,
    pub tags: Vec<String>,
    pub status: Option<Status>,
    pub assignee: Option<String>,
    pub resume: Option<String>,
    pub lease_until: Option<String>,
    /// Tasks: how many times claimed; every claim after the first is a retry.
    #[serde(default)]
    pub attempts: i64,
    /// Tasks: the error of the last `task.fail`.
    #[serde(default)]
    pub error: Option<String>,
    pub category: Option<Category>,
    pub confidence: Option<f64>,
    #[serde(serialize_with = "crate::seal::list")]
    pub depends_on: Vec<NoteRef>,
    /// The id of the entry this one answers (threads).
    #[serde(default)]
    pub reply_to: Option<NoteRef>,
    /// Questions: the answers offered, e.g. `["approve", "deny"]`.
    #[serde(default)]
    pub choices: Vec<String>,
    /// How many entries reply to this one.
    #[serde(default)]
    pub replies: i64,
    /// The id of the first reply by someone other than the author: the
    /// answer, for a question.
    #[serde(default)]
    pub answer: Option<NoteRef>,
    /// The authors this note is addressed to: it reaches their inbox, and
    /// agents registered with an A2A endpoint are sent it (`agent.add`).
    #[serde(default)]
    pub to: Vec<String>,
    /// The id of the older note this one replaces: it holds now, the older
    /// one is kept and found with `include_superseded`.
    #[serde(default)]
    pub supersedes: Option<NoteRef>,
    /// The id of the newest live note that supersedes this one, if any
    /// (read from theirs: nothing is written on this note).
    #[serde(default)]
    pub superseded_by: Option<NoteRef>,
    pub remind_at: Option<String>,
    pub pinned: bool,
    #[serde(serialize_with = "crate::seal::meta")]
    #[cfg_attr(test, ts(type = "Record<string, unknown> | null"))]
    pub meta: Option<serde_json::Map<String, Value>>,
    pub created_at: String,
    pub updated_at: String,
    pub version: i64,
}

impl Entry {
    pub fn has_tag(&self, tag: &str) -> bool {
        self.tags.iter().any(|t| t == tag)
    }
}

macro_rules! word_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(test, derive(ts_rs::TS))]
        #[serde(rename_all = "lowercase")]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [&'static str] = &[$($text),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            pub fn parse(s: &str) -> Option<Self> {
                match s { $($text => Some($name::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

word_enum!(
    /// What an entry is.
    Kind { Note = "note", Plan = "plan", Task = "task", Result = "result", Insight = "insight", Question = "question" }
);
word_enum!(
    /// Where a task stands.
    Status { Todo = "todo", Doing = "doing", Done = "done", Failed = "failed", Blocked = "blocked" }
);
word_enum!(
    /// What sort of insight an entry records.
    Category { Pattern = "pattern", Gotcha = "gotcha", Discovery = "discovery", Learning = "learning" }
);

// Written out because the variants come from `word_enum!`.
#[allow(clippy::derivable_impls)]
impl Default for Kind {
    fn default() -> Self {
        Kind::Note
    }
}

/// A pad as listed by `pad.list` and returned by `pad.configure`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Pad {
    pub name: String,
    pub entries: i64,
    pub last_write_at: String,
    pub expires_at: Option<String>,
    pub ttl_seconds: Option<i64>,
    pub max_entries: Option<i64>,
    pub archived: bool,
    pub archived_at: Option<String>,
}

/// Case-folds and checks a pad name: 1–64 chars of `[a-z0-9._:-]`.
pub fn pad_name(field: &str, raw: &str) -> Result<String> {
    let name = raw.trim().to_lowercase();
    if name.is_empty() {
        return Err(Error::invalid(
            field,
            format!("'{field}' is empty. Name a pad: 1-{MAX_PAD_LEN} characters of a-z, 0-9, '.', '_', ':' or '-', e.g. 'inbox' or 'proj-x:research'."),
        ));
    }
    let len = name.chars().count();
    if len > MAX_PAD_LEN {
        return Err(Error::over_limit(
            field,
            format!(
                "pad name is {len} characters; the limit is {MAX_PAD_LEN}. Use a shorter name."
            ),
            MAX_PAD_LEN,
            len,
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !matches!(c, 'a'..='z' | '0'..='9' | '.' | '_' | ':' | '-'))
    {
        return Err(Error::invalid(
            field,
            format!("pad name '{raw}' contains '{bad}'; pad names use only a-z, 0-9, '.', '_', ':' and '-' (no '/', spaces or other characters). Try '{}'.", suggest(&name, |c| matches!(c, 'a'..='z' | '0'..='9' | '.' | '_' | ':' | '-'))),
        ));
    }
    if name.chars().all(|c| c == '.') {
        return Err(Error::invalid(
            field,
            format!("pad name '{raw}' is only dots; pick a name with a letter or digit in it."),
        ));
    }
    Ok(name)
}

/// Case-folds, deduplicates and checks tags: at most 10, each 1–32 chars of `[a-z0-9_-]`.
pub fn tags(field: &str, raw: &[String]) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::with_capacity(raw.len());
    for t in raw {
        let tag = t.trim().trim_start_matches('#').to_lowercase();
        if tag.is_empty() {
            return Err(Error::invalid(
                field,
                format!("'{field}' has an empty tag; remove it or give it 1-{MAX_TAG_LEN} characters of a-z, 0-9, '_' or '-'."),
            ));
        }
        let len = tag.chars().count();
        if len > MAX_TAG_LEN {
            return Err(Error::over_limit(
                field,
                format!("tag '{t}' is {len} characters; the limit is {MAX_TAG_LEN}. Shorten it."),
                MAX_TAG_LEN,
                len,
            ));
        }
        if let Some(bad) = tag
            .chars()
            .find(|c| !matches!(c, 'a'..='z' | '0'..='9' | '_' | '-'))
        {
            return Err(Error::invalid(
                field,
                format!(
                    "tag '{t}' contains '{bad}'; tags use only a-z, 0-9, '_' and '-'. Try '{}'.",
                    suggest(&tag, |c| matches!(c, 'a'..='z' | '0'..='9' | '_' | '-'))
                ),
            ));
        }
        if !out.contains(&tag) {
            out.push(tag);
        }
    }
    if out.len() > MAX_TAGS {
        return Err(Error::over_limit(
            field,
            format!(
                "note has {} tags; the limit is {MAX_TAGS}. Keep the most specific ones, or split the note.",
                out.len()
            ),
            MAX_TAGS,
            out.len(),
        ));
    }
    Ok(out)
}

/// A new entry's author: the one it names, else its connection's, else
/// "anonymous".
pub fn entry_author(given: Option<&str>, connection: Option<&str>) -> Result<String> {
    match given.or(connection) {
        Some(a) => author("author", a),
        None => Ok("anonymous".to_string()),
    }
}

/// Case-folds and checks an author: 1–64 chars of letters, digits and `._:@-`.
pub fn author(field: &str, raw: &str) -> Result<String> {
    let a = raw.trim().to_lowercase();
    let len = a.chars().count();
    if a.is_empty() || len > MAX_AUTHOR_LEN {
        return Err(Error::over_limit(
            field,
            format!("author must be 1-{MAX_AUTHOR_LEN} characters (got {len}), e.g. 'user' or 'agent-research'."),
            MAX_AUTHOR_LEN,
            len,
        ));
    }
    if let Some(bad) = a
        .chars()
        .find(|c| !(c.is_alphanumeric() || matches!(c, '.' | '_' | ':' | '@' | '-')))
    {
        return Err(Error::invalid(
            field,
            format!("author '{raw}' contains '{bad}'; use letters, digits, '.', '_', ':', '@' or '-', e.g. 'agent-0'."),
        ));
    }
    Ok(a)
}

/// Names no registered agent or token may take: the person's, the
/// engine's, the one a call without an author writes under, and words that
/// read as everyone.
pub const RESERVED_AGENT_NAMES: &[&str] = &[
    "user",
    "person",
    "owner",
    "me",
    "engine",
    "system",
    "everyone",
    "all",
    "agents",
    "anonymous",
];

/// Checks a registered agent's name: ASCII letters, digits, '.', '_' and
/// '-', starting with a letter or digit — so no look-alike (a Cyrillic 'а')
/// passes for another — not a reserved name, and without the '@' a note
/// addresses it by.
pub fn agent_name(field: &str, raw: &str) -> Result<String> {
    let trimmed = raw.trim();
    if let Some(bare) = trimmed.strip_prefix('@') {
        return Err(Error::invalid(
            field,
            format!(
                "leave out the '@': notes address an agent as @{bare}, but its name is '{bare}'."
            ),
        ));
    }
    let name = author(field, trimmed)?;
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(Error::invalid(
            field,
            format!("agent name '{raw}' contains '{bad}' (U+{:04X}); an agent's name is ASCII letters, digits, '.', '_' and '-' (so no look-alike passes for another agent), e.g. 'agent-zero'.", bad as u32),
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(Error::invalid(
            field,
            format!("agent name '{name}' must start with a letter or a digit, e.g. 'agent-zero'."),
        ));
    }
    if RESERVED_AGENT_NAMES.contains(&name.as_str()) {
        return Err(Error::invalid(
            field,
            format!("'{name}' is reserved (the person, the engine, or everyone); give the agent a name of its own, e.g. 'agent-zero'."),
        ));
    }
    Ok(name)
}

/// Checks content against the configured character limit.
pub fn content(field: &str, raw: &str, max_chars: usize) -> Result<()> {
    if raw.trim().is_empty() {
        return Err(Error::invalid(
            field,
            format!("'{field}' is empty; write something (up to {max_chars} characters)."),
        ));
    }
    let len = raw.chars().count();
    if len > max_chars {
        return Err(Error::TooLarge {
            field: Some(field.into()),
            message: format!(
                "content is {len} characters; the limit is {max_chars}. Split it into several entries, or keep the large artifact elsewhere and put its path in 'meta'."
            ),
            limit: max_chars as u64,
            got: len as u64,
        });
    }
    Ok(())
}

pub const MAX_RECIPIENTS: usize = 10;

/// Checks whom a note is addressed to (`to`): at most 10 author names, each
/// as `author` checks it (a leading `@` is dropped), each once.
pub fn recipients(field: &str, raw: &[String]) -> Result<Vec<String>> {
    if raw.len() > MAX_RECIPIENTS {
        return Err(Error::over_limit(
            field,
            format!("the note is addressed to {} authors; the limit is {MAX_RECIPIENTS}. Address the agents who should act, and leave the rest to read the pad.", raw.len()),
            MAX_RECIPIENTS,
            raw.len(),
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(raw.len());
    for r in raw {
        let name = author(field, r.trim().trim_start_matches('@'))?;
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

pub const MAX_CHOICES: usize = 10;
pub const MAX_CHOICE_LEN: usize = 64;

/// Checks a question's choices: at most 10, each 1–64 characters on one
/// line, no two alike (ignoring case). Surrounding space is trimmed.
pub fn choices(field: &str, raw: &[String]) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::with_capacity(raw.len());
    for c in raw {
        let choice = c.trim();
        let len = choice.chars().count();
        if len == 0 || len > MAX_CHOICE_LEN || choice.contains(['\n', '\r']) {
            return Err(Error::over_limit(
                field,
                format!("choice '{c}' must be 1-{MAX_CHOICE_LEN} characters on one line (got {len}); offer short answers such as 'approve' and 'deny'."),
                MAX_CHOICE_LEN,
                len,
            ));
        }
        if out
            .iter()
            .any(|o| o.to_lowercase() == choice.to_lowercase())
        {
            return Err(Error::invalid(
                field,
                format!("choice '{choice}' is offered twice; list each answer once."),
            ));
        }
        out.push(choice.to_string());
    }
    if out.len() > MAX_CHOICES {
        return Err(Error::over_limit(
            field,
            format!("{} choices offered; the limit is {MAX_CHOICES}. Offer the few answers that matter; the person can always write another.", out.len()),
            MAX_CHOICES,
            out.len(),
        ));
    }
    Ok(out)
}

/// How deep `meta` may nest (the object itself is level 1). Every client
/// reads a note inside a few levels of reply (JSON-RPC, result, entries),
/// and the JSON readers of Rust and others stop at 128 levels: far below
/// that, so a note anyone may write is a note everyone can read.
pub const MAX_META_DEPTH: usize = 32;

/// Checks the free-form `meta` object against its 16 KiB and 32-level limits.
pub fn meta(raw: &serde_json::Map<String, Value>) -> Result<()> {
    let depth = 1 + raw.values().map(nesting).max().unwrap_or(0);
    if depth > MAX_META_DEPTH {
        return Err(Error::over_limit(
            "meta",
            format!("meta nests {depth} levels deep; the limit is {MAX_META_DEPTH}. Keep meta flat: a few keys of plain values, lists or small objects."),
            MAX_META_DEPTH,
            depth,
        ));
    }
    let size = serde_json::to_vec(raw).map(|v| v.len()).unwrap_or(0);
    if size > MAX_META_BYTES {
        return Err(Error::TooLarge {
            field: Some("meta".into()),
            message: format!(
                "meta is {size} bytes of JSON; the limit is {MAX_META_BYTES}. Keep references (paths, ids, URLs) in meta, not the data itself."
            ),
            limit: MAX_META_BYTES as u64,
            got: size as u64,
        });
    }
    Ok(())
}

/// Levels of objects and arrays in `v` (a plain value is 0), counted
/// without recursion, so no depth can exhaust the stack.
fn nesting(v: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 0usize)];
    while let Some((v, above)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(a) => Box::new(a.iter()),
            Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        deepest = deepest.max(above + 1);
        stack.extend(children.map(|c| (c, above + 1)));
    }
    deepest
}

pub fn confidence(raw: f64) -> Result<f64> {
    if !(0.0..=1.0).contains(&raw) || raw.is_nan() {
        return Err(Error::over_limit(
            "confidence",
            format!("confidence is {raw}; it must be between 0 and 1 (0.8 = fairly sure)."),
            1.0,
            raw,
        ));
    }
    Ok(raw)
}

fn suggest(s: &str, ok: impl Fn(char) -> bool) -> String {
    let cleaned: String = s.chars().map(|c| if ok(c) { c } else { '-' }).collect();
    let trimmed = cleaned.trim_matches(|c| c == '-' || c == '.');
    if trimmed.is_empty() {
        "notes".into()
    } else {
        trimmed.to_string()
    }
}

/// A count in words that agree with it: "1 note", "2 notes", "0 notes".
pub fn count(n: impl Into<i64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Formats Unix milliseconds as RFC 3339 UTC with milliseconds.
pub fn fmt_time(ms: i64) -> String {
    let t = OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let (year, month, day) = t.to_calendar_date();
    if !(0..=9999).contains(&year) {
        let fmt = time::macros::format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        );
        return t.format(&fmt).unwrap_or_default();
    }
    // Digit by digit: every entry carries two or three times, and the general
    // formatter was ~10% of listing 20 entries.
    let mut out = *b"0000-00-00T00:00:00.000Z";
    let mut put = |at: usize, width: usize, mut v: u32| {
        for i in (at..at + width).rev() {
            out[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, 4, year as u32);
    put(5, 2, u8::from(month) as u32);
    put(8, 2, day as u32);
    put(11, 2, t.hour() as u32);
    put(14, 2, t.minute() as u32);
    put(17, 2, t.second() as u32);
    put(20, 3, t.millisecond() as u32);
    String::from_utf8(out.to_vec()).expect("ASCII digits")
}

/// Parses an RFC 3339 time into Unix milliseconds.
pub fn parse_time(field: &str, raw: &str) -> Result<i64> {
    OffsetDateTime::parse(raw, &Rfc3339)
        .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
        .map_err(|_| {
            Error::invalid(
                field,
                format!("'{field}' is '{raw}', not an RFC 3339 time; write it like '2026-11-20T14:30:00Z'."),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_format_as_rfc3339_with_milliseconds() {
        let general = |ms: i64| {
            let t = OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000).unwrap();
            t.format(&time::macros::format_description!(
                "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
            ))
            .unwrap()
        };
        assert_eq!(fmt_time(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(fmt_time(1_790_000_000_123), "2026-09-21T14:13:20.123Z");
        assert_eq!(fmt_time(-1), "1969-12-31T23:59:59.999Z");
        let mut rng = fastrand::Rng::with_seed(3);
        let (year_0, year_10000) = (-62_167_219_200_000, 253_402_300_800_000);
        for _ in 0..10_000 {
            // Years 0 to 9999, and some before year 0 (the general formatter's).
            let ms = rng.i64(year_0 - 3_000_000_000_000..year_10000);
            assert_eq!(fmt_time(ms), general(ms), "{ms}");
            if ms >= year_0 {
                assert_eq!(parse_time("t", &fmt_time(ms)).unwrap(), ms);
            }
        }
    }

    #[test]
    fn pad_names_fold_case_and_refuse_paths() {
        assert_eq!(
            pad_name("pad", " Proj-X:Research ").unwrap(),
            "proj-x:research"
        );
        assert!(pad_name("pad", "../x")
            .unwrap_err()
            .to_string()
            .contains("'/'"));
        assert!(pad_name("pad", "..").is_err());
        assert!(pad_name("pad", "").is_err());
        assert!(pad_name("pad", &"a".repeat(65)).is_err());
    }

    #[test]
    fn tags_fold_dedupe_and_enforce_limits() {
        let t = tags("tags", &["Bug".into(), "bug".into(), "#needs_eyes".into()]).unwrap();
        assert_eq!(t, vec!["bug", "needs_eyes"]);
        let eleven: Vec<String> = (0..11).map(|i| format!("t{i}")).collect();
        let e = tags("tags", &eleven).unwrap_err();
        assert!(e.to_string().contains("limit is 10"), "{e}");
        assert!(tags("tags", &["white space".into()]).is_err());
    }

    #[test]
    fn times_round_trip_with_milliseconds() {
        let ms = 1_763_650_000_123;
        let s = fmt_time(ms);
        assert_eq!(s, "2025-11-20T14:46:40.123Z");
        assert_eq!(parse_time("t", &s).unwrap(), ms);
        assert!(parse_time("t", "yesterday").is_err());
    }
}

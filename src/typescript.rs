//! The UI's wire types (`ui/src/protocol.ts`) are generated from the
//! engine's Rust types with ts-rs, so the two cannot drift: the test fails
//! when the file differs from what the types say, and
//! `UPDATE_TS=1 cargo test --lib typescript` rewrites it. With them goes
//! `Params` and `Results`, what each method is sent and answers, which type
//! the UI's `rpc` (every call's params and result are the method's types,
//! never a shape written in place).

use std::path::Path;

use ts_rs::{Config, TS};

use crate::events::{EventType, Trashed};
use crate::model::{Category, Entry, Kind, Pad, Status};
use crate::protocol::method::{method_params, method_results};
use crate::protocol::*;

const FILE: &str = "ui/src/protocol.ts";

fn declaration<T: TS>(cfg: &Config) -> String {
    let docs = T::docs().unwrap_or_default();
    format!("{docs}export {}\n", T::decl(cfg))
}

fn generated() -> String {
    // Counts and versions fit a JavaScript number; JSON carries them so.
    let cfg = Config::new().with_large_int("number");
    let mut decls = vec![
        declaration::<Kind>(&cfg),
        declaration::<Status>(&cfg),
        declaration::<Category>(&cfg),
        declaration::<NoteRef>(&cfg),
        declaration::<Entry>(&cfg),
        declaration::<Pad>(&cfg),
        declaration::<EventType>(&cfg),
        declaration::<ListResult>(&cfg),
        declaration::<SearchMode>(&cfg),
        declaration::<ExportFormat>(&cfg),
        declaration::<WordWeight>(&cfg),
        declaration::<Candidates>(&cfg),
        declaration::<Ranked>(&cfg),
        declaration::<QueryExplain>(&cfg),
        declaration::<HitExplain>(&cfg),
        declaration::<SearchHit>(&cfg),
        declaration::<SearchResult>(&cfg),
        declaration::<ThreadResult>(&cfg),
        declaration::<AskResult>(&cfg),
        declaration::<Action>(&cfg),
        declaration::<Version>(&cfg),
        declaration::<Trashed>(&cfg),
        declaration::<AgentSkill>(&cfg),
        declaration::<AgentCard>(&cfg),
        declaration::<AgentInfo>(&cfg),
        declaration::<Brief>(&cfg),
        declaration::<SeenAuthor>(&cfg),
        declaration::<AgentListResult>(&cfg),
        declaration::<DeliveryState>(&cfg),
        declaration::<Control>(&cfg),
        declaration::<Delivery>(&cfg),
        declaration::<HelloResult>(&cfg),
        declaration::<EntryResult>(&cfg),
        declaration::<LooksLike>(&cfg),
        declaration::<DeleteResult>(&cfg),
        declaration::<TagCount>(&cfg),
        declaration::<TagsResult>(&cfg),
        declaration::<PadListResult>(&cfg),
        declaration::<PadResult>(&cfg),
        declaration::<ClearResult>(&cfg),
        declaration::<ExportResult>(&cfg),
        declaration::<SubscribeResult>(&cfg),
        declaration::<OkResult>(&cfg),
        declaration::<Activity>(&cfg),
        declaration::<PadActivity>(&cfg),
        declaration::<StatsResult>(&cfg),
        declaration::<SemanticInfo>(&cfg),
        declaration::<ReindexResult>(&cfg),
        declaration::<InboxResult>(&cfg),
        declaration::<StepState>(&cfg),
        declaration::<PlanStep>(&cfg),
        declaration::<PlanCounts>(&cfg),
        declaration::<PlanResult>(&cfg),
        declaration::<ClaimResult>(&cfg),
        declaration::<ShareResult>(&cfg),
        declaration::<AuthorReport>(&cfg),
        declaration::<TaskReport>(&cfg),
        declaration::<ReportResult>(&cfg),
        declaration::<TokenInfo>(&cfg),
        declaration::<TokenCreateResult>(&cfg),
        declaration::<TokenListResult>(&cfg),
        declaration::<TokenRevokeResult>(&cfg),
        declaration::<HistoryResult>(&cfg),
        declaration::<TrashResult>(&cfg),
        declaration::<Skipped>(&cfg),
        declaration::<RestoreResult>(&cfg),
        declaration::<PurgeResult>(&cfg),
        declaration::<Change>(&cfg),
        declaration::<ChangesResult>(&cfg),
        declaration::<AgentResult>(&cfg),
        declaration::<AgentRemoveResult>(&cfg),
        declaration::<DeliveriesResult>(&cfg),
    ];
    decls.extend(params(&cfg));
    decls.push(results(&cfg));
    format!(
        "// Generated from the engine's Rust types by src/typescript.rs: do not edit.\n\
         // `UPDATE_TS=1 cargo test --lib typescript` rewrites it after a change.\n\n{}",
        decls.join("\n")
    )
}

/// Each method's params type, once each, then what each method is sent,
/// as protocol.ts's `Params`.
fn params(cfg: &Config) -> Vec<String> {
    let all = method_params(cfg);
    let mut decls = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (_, name, decl) in &all {
        if seen.insert(name.clone()) {
            decls.push(decl.clone());
        }
    }
    let rows = all
        .iter()
        .map(|(method, name, _)| format!("  \"{method}\": {name};\n"))
        .collect::<String>();
    decls.push(format!(
        "/**\n * What each method is sent (`rpc` in api.ts takes it).\n */\nexport interface Params {{\n{rows}}}\n"
    ));
    decls
}

/// What each method answers, as protocol.ts's `Results`.
fn results(cfg: &Config) -> String {
    let rows = method_results(cfg)
        .into_iter()
        .map(|(method, result)| format!("  \"{method}\": {result};\n"))
        .collect::<String>();
    format!(
        "/**\n * What each method answers (`rpc` in api.ts returns it).\n */\nexport interface Results {{\n{rows}}}\n\nexport type Method = keyof Results;\n"
    )
}

#[test]
fn every_method_has_its_result_type() {
    let cfg = Config::new();
    let named: Vec<&str> = method_results(&cfg).into_iter().map(|(m, _)| m).collect();
    assert_eq!(named, METHODS, "method_results must list METHODS, in order");
}

#[test]
fn the_ui_types_match_the_engine_types() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE);
    let want = generated();
    if std::env::var_os("UPDATE_TS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &want).expect("write the UI's types");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{FILE} is out of date with the engine's types; run `UPDATE_TS=1 cargo test --lib typescript` and commit it"
    );
}

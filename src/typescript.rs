//! The UI's wire types (`ui/src/protocol.ts`) are generated from the
//! engine's Rust types with ts-rs, so the two cannot drift: the test fails
//! when the file differs from what the types say, and
//! `UPDATE_TS=1 cargo test --lib typescript` rewrites it.

use std::path::Path;

use ts_rs::{Config, TS};

use crate::events::{EventType, Trashed};
use crate::model::{Category, Entry, Kind, Pad, Status};
use crate::protocol::{
    Action, AgentCard, AgentInfo, AgentListResult, AgentSkill, AskResult, Brief, Delivery,
    DeliveryState, ListResult, SearchHit, SearchMode, SearchResult, SeenAuthor, ThreadResult,
    Version,
};

const FILE: &str = "ui/src/protocol.ts";

fn declaration<T: TS>(cfg: &Config) -> String {
    let docs = T::docs().unwrap_or_default();
    format!("{docs}export {}\n", T::decl(cfg))
}

fn generated() -> String {
    // Counts and versions fit a JavaScript number; JSON carries them so.
    let cfg = Config::new().with_large_int("number");
    let decls = [
        declaration::<Kind>(&cfg),
        declaration::<Status>(&cfg),
        declaration::<Category>(&cfg),
        declaration::<Entry>(&cfg),
        declaration::<Pad>(&cfg),
        declaration::<EventType>(&cfg),
        declaration::<ListResult>(&cfg),
        declaration::<SearchMode>(&cfg),
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
        declaration::<Delivery>(&cfg),
    ];
    format!(
        "// Generated from the engine's Rust types by src/typescript.rs: do not edit.\n\
         // `UPDATE_TS=1 cargo test --lib typescript` rewrites it after a change.\n\n{}",
        decls.join("\n")
    )
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

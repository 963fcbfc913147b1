//! `pad note`, `show`, `ls`, `search`, `edit`, `rm`, `tags`, `pads`,
//! `configure`, `clear`, `export`, `watch`, `stats` and `reindex`: notes and
//! pads at the terminal, each command one request of the protocol's types.

use std::io::IsTerminal;

use super::args::{content_arg, duration_secs, since_arg, word};
use super::{render, LsArgs, NoteArgs, SearchArgs, Show, UsageError};
use super::{ConfigureArgs, EditArgs};
use crate::client::Client;
use crate::protocol::method as m;
use crate::protocol::*;

pub async fn note(a: NoteArgs, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let params = AddParams {
        content: content_arg(a.content)?,
        pad: a.pad,
        tags: a.tags,
        kind: Some(word("--kind", &a.kind)?),
        author: Some(a.author),
        pinned: a.pin,
        supersedes: a.supersedes,
        idempotency_key: a.idempotency_key,
        ..AddParams::default()
    };
    let r = c.write::<m::EntryAdd>(params).await?;
    show.print(&r, |r| println!("{}", r.entry.id))
}

pub async fn show_entry(id: String, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let r = c.request::<m::EntryGet>(&IdParams { id }).await?;
    show.print(&r, |r| render::entry_full(&r.entry))
}

pub async fn ls(a: LsArgs, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let mut params = ListParams {
        pad: a.pad,
        tags: a.tags,
        author: a.author,
        kind: a.kind.as_deref().map(|k| word("--kind", k)).transpose()?,
        status: a
            .status
            .as_deref()
            .map(|s| word("--status", s))
            .transpose()?,
        category: a
            .category
            .as_deref()
            .map(|k| word("--category", k))
            .transpose()?,
        min_confidence: a.min_confidence,
        since: a.since.as_deref().map(since_arg).transpose()?,
        limit: Some(a.limit),
        cursor: None,
        include_superseded: a.include_superseded,
    };
    let mut all = Vec::new();
    loop {
        let r = c.request::<m::EntryList>(&params).await?;
        all.extend(r.entries);
        match r.next_cursor {
            Some(cursor) if a.all => params.cursor = Some(cursor),
            next_cursor => {
                let r = ListResult {
                    entries: all,
                    next_cursor,
                };
                return show.print(&r, render::entry_list);
            }
        }
    }
}

pub async fn search(a: SearchArgs, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let mode: SearchMode = word("--mode", &a.mode)?;
    let params = SearchParams {
        query: a.query,
        mode,
        pad: a.pad,
        tags: a.tags,
        kind: a.kind.as_deref().map(|k| word("--kind", k)).transpose()?,
        author: a.author,
        category: a
            .category
            .as_deref()
            .map(|k| word("--category", k))
            .transpose()?,
        min_confidence: a.min_confidence,
        limit: Some(a.limit),
        include_superseded: a.include_superseded,
        explain: a.explain,
    };
    let r = c.request::<m::Search>(&params).await?;
    // Asked for meaning (the default) and got words only: say so once.
    if r.mode == SearchMode::Text && mode != SearchMode::Text {
        let why = match c.request::<m::Stats>(&StatsParams::default()).await {
            Ok(stats) if stats.semantic.status == "loading" => {
                "the model is still loading; try again in a moment".to_string()
            }
            Ok(stats) => stats
                .semantic
                .reason
                .unwrap_or_else(|| "it is not running".into()),
            Err(_) => "it is not running".into(),
        };
        eprintln!(
            "pad: searched words only: meaning search is unavailable ({}). docs/operations.md, \"Semantic search\", says how to enable it.",
            render::safe_text(&why)
        );
    }
    if r.not_embedded > 0 {
        eprintln!(
            "pad: {} written moments ago not yet searchable by meaning (the engine is still embedding a burst of writes); words find them now (--mode text), meaning in a moment.",
            crate::model::count(r.not_embedded as i64, "entry", "entries")
        );
    }
    show.print(&r, render::hits)
}

pub async fn edit(a: EditArgs, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let changes = a.content.is_some()
        || !a.tags.is_empty()
        || a.no_tags
        || a.kind.is_some()
        || a.status.is_some()
        || a.pin
        || a.unpin
        || a.supersedes.is_some();
    if !changes {
        return Err(UsageError(
            "nothing to change: give new content, --tag, --kind, --status, --pin, --unpin or --supersedes".into(),
        )
        .into());
    }
    let none_or = |flag: &'static str, s: Option<String>| {
        s.map(|s| match s.as_str() {
            "none" => Ok(None),
            s => word(flag, s).map(Some),
        })
        .transpose()
    };
    let params = UpdateParams {
        id: a.id,
        content: a.content.map(|c| content_arg(Some(c))).transpose()?,
        tags: (!a.tags.is_empty() || a.no_tags).then_some(a.tags),
        kind: a.kind.as_deref().map(|k| word("--kind", k)).transpose()?,
        status: none_or("--status", a.status)?,
        pinned: (a.pin || a.unpin).then_some(a.pin),
        if_version: a.if_version,
        supersedes: a.supersedes.map(|s| (s != "none").then_some(s)),
        ..UpdateParams::default()
    };
    let r = c.request::<m::EntryUpdate>(&params).await?;
    show.print(&r, |r| {
        println!("{} is now version {}", r.entry.id, r.entry.version)
    })
}

pub async fn rm(ids: Vec<String>, c: &mut Client, show: Show) -> anyhow::Result<()> {
    #[derive(serde::Serialize, serde::Deserialize)]
    struct Deleted {
        deleted: Vec<DeleteResult>,
    }
    let mut deleted = Vec::new();
    for id in ids {
        let params = DeleteParams {
            id,
            if_version: None,
        };
        deleted.push(c.request::<m::EntryDelete>(&params).await?);
    }
    show.print(&Deleted { deleted }, |r| {
        for d in &r.deleted {
            println!("deleted {} (pad restore {} brings it back)", d.id, d.id);
        }
    })
}

pub async fn tags(pad: Option<String>, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let r = c.request::<m::TagsList>(&TagsParams { pad }).await?;
    show.print(&r, render::tags)
}

pub async fn pads(all: bool, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let params = PadListParams {
        include_archived: all,
    };
    let r = c.request::<m::PadList>(&params).await?;
    show.print(&r, |r| render::pads(&r.pads))
}

pub async fn configure(a: ConfigureArgs, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let ttl_seconds = match a.ttl.as_deref() {
        None => None,
        Some("never" | "none") => Some(None),
        Some(d) => Some(Some(duration_secs(d)?)),
    };
    let max_entries = match a.max_entries.as_deref() {
        None => None,
        Some("none" | "never") => Some(None),
        Some(n) => Some(Some(n.parse::<i64>().map_err(|_| {
            UsageError(format!("--max-entries '{n}': give a number, or 'none'"))
        })?)),
    };
    let params = ConfigureParams {
        name: a.pad,
        ttl_seconds,
        max_entries,
    };
    let r = c.request::<m::PadConfigure>(&params).await?;
    show.print(&r, |r| render::pads(std::slice::from_ref(&r.pad)))
}

pub async fn clear(
    pad: String,
    yes: bool,
    keep_pinned: bool,
    c: &mut Client,
    show: Show,
) -> anyhow::Result<()> {
    if !yes {
        if !std::io::stdin().is_terminal() {
            return Err(UsageError(format!(
                "refusing to clear pad '{pad}' without --yes (stdin is not a terminal to ask on)"
            ))
            .into());
        }
        eprint!("Delete every entry of pad '{pad}'? [y/N] ");
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            eprintln!("nothing deleted");
            return Ok(());
        }
    }
    let params = ClearParams {
        name: pad,
        keep_pinned,
    };
    let r = c.request::<m::PadClear>(&params).await?;
    show.print(&r, |r| match r.change {
        None => println!("deleted {} entries", r.deleted),
        Some(change) => println!(
            "deleted {} entries (pad restore --change {change} brings them back)",
            r.deleted
        ),
    })
}

pub async fn export(
    name: String,
    format: String,
    budget: Option<usize>,
    include_superseded: bool,
    c: &mut Client,
    show: Show,
) -> anyhow::Result<()> {
    let params = ExportParams {
        name,
        format: word("--format", &format)?,
        budget,
        include_superseded,
    };
    let r = c.request::<m::PadExport>(&params).await?;
    show.print(&r, |r| print!("{}", r.text))
}

pub async fn watch(params: SubscribeParams, c: &mut Client, show: Show) -> anyhow::Result<()> {
    c.request::<m::Subscribe>(&params).await?;
    if !show.json {
        eprintln!("watching; Ctrl-C to stop");
    }
    while let Some(event) = c.next_event().await? {
        if show.json {
            println!("{}", serde_json::to_string(&event)?);
        } else {
            render::event(&render::terminal_safe(&event));
        }
    }
    Ok(())
}

pub async fn stats(c: &mut Client, show: Show) -> anyhow::Result<()> {
    let r = c
        .request::<m::Stats>(&StatsParams { activity: true })
        .await?;
    show.print(&r, render::stats)
}

pub async fn reindex(c: &mut Client, show: Show) -> anyhow::Result<()> {
    let r = c.request::<m::Reindex>(&ReindexParams {}).await?;
    show.print(&r, |r| {
        println!(
            "re-embedding {} entries in the background; `pad stats` shows the embed queue and the time left",
            r.queued
        )
    })
}

//! The methods: one row of `TABLE` per protocol method (`hello` aside, as
//! it sets up the session the others run in), each a short handler that
//! parses its params, asks the call's guard, and calls the engine.

use std::future::Future;
use std::pin::Pin;

use super::{actor, parse, reply, Params, Reply, Session, MAX_SUBSCRIPTIONS};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::guard::Guard;
use crate::model;
use crate::protocol::*;

use super::declared::Answer::Scoped;
use super::declared::Does::{self, Clear, Edit, Hide, Read, Remove, Write};
use super::declared::{Answer, Declared, PadField};

const NONE: Declared = Declared::NONE;

/// One call: the engine, the connection's session and the call's guard.
pub(super) struct Call<'a> {
    pub engine: &'a Engine,
    pub session: &'a mut Session,
    pub guard: Guard,
}

type Handler =
    for<'a> fn(Call<'a>, Params<'a>) -> Pin<Box<dyn Future<Output = Result<Reply>> + Send + 'a>>;

/// One row: the method, its handler, and what it may touch.
pub(super) type Row = (&'static str, Handler, Declared);

macro_rules! table {
    ($($method:literal => $handler:ident $declared:expr),* $(,)?) => {
        /// Every method but `hello`, in `protocol::METHODS`'s order.
        pub(super) const TABLE: &[Row] = &[
            $(($method, |c, p| Box::pin($handler(c, p)), $declared)),*
        ];
    };
}

const fn pad(field: &'static str, does: Does) -> PadField {
    PadField {
        field,
        does,
        inbox_unless: None,
    }
}

/// Reads what one pad argument names, if given.
const READS_PAD: Declared = Declared {
    pads: &[pad("pad", Read)],
    answer: Scoped,
    ..NONE
};
/// Changes the note `id` names.
const WRITES_NOTE: Declared = Declared {
    notes: &[("id", Write)],
    ..NONE
};
/// Answers from the store through the caller's scope.
const SCOPED: Declared = Declared {
    answer: Scoped,
    ..NONE
};
const fn owner(what: &'static str) -> Declared {
    Declared {
        owner_only: Some(what),
        ..NONE
    }
}

table! {
    "entry.add" => entry_add Declared {
        pads: &[pad("pad", Write)],
        notes: &[("reply_to", Read), ("supersedes", Hide), ("depends_on", Read)],
        agents: Some("to"),
        // Its duplicate hint is drawn from what the caller may read.
        answer: Scoped,
        ..NONE
    },
    "entry.get" => entry_get Declared { notes: &[("id", Read)], ..NONE },
    "entry.update" => entry_update Declared {
        notes: &[("id", Edit), ("supersedes", Hide), ("depends_on", Read)],
        ..NONE
    },
    "entry.delete" => entry_delete Declared { notes: &[("id", Remove)], ..NONE },
    "entry.history" => entry_history SCOPED,
    "entry.trash" => entry_trash READS_PAD,
    "entry.restore" => entry_restore Declared { writes_found: true, answer: Scoped, ..NONE },
    "entry.purge" => entry_purge owner("purge the history and trash for good"),
    "entry.changes" => entry_changes READS_PAD,
    "entry.list" => entry_list READS_PAD,
    "search" => search READS_PAD,
    "tags.list" => tags_list READS_PAD,
    "pad.list" => pad_list SCOPED,
    // A pad's limits and lifetime are the person's: the owner's alone.
    "pad.configure" => pad_configure Declared {
        pads: &[pad("name", Write)],
        owner_only: Some("change a pad's settings (its limits, lifetime or archive)"),
        ..NONE
    },
    "pad.touch" => pad_touch Declared { pads: &[pad("name", Write)], ..NONE },
    "pad.clear" => pad_clear Declared { pads: &[pad("name", Clear)], ..NONE },
    "pad.export" => pad_export Declared { pads: &[pad("name", Read)], ..NONE },
    "subscribe" => subscribe SCOPED,
    "unsubscribe" => unsubscribe Declared { answer: Answer::Session, ..NONE },
    "stats" => stats SCOPED,
    "reindex" => reindex owner("rebuild the semantic index"),
    "inbox" => inbox SCOPED,
    "plan.order" => plan_order Declared { pads: &[pad("pad", Read)], ..NONE },
    "task.claim" => task_claim Declared { pads: &[pad("pad", Write)], ..NONE },
    "task.heartbeat" => task_heartbeat WRITES_NOTE,
    "task.complete" => task_complete WRITES_NOTE,
    "task.fail" => task_fail WRITES_NOTE,
    "entry.share" => entry_share Declared {
        pads: &[pad("to", Write)],
        notes: &[("id", Read)],
        ..NONE
    },
    "entry.thread" => entry_thread Declared { notes: &[("id", Read)], answer: Scoped, ..NONE },
    "ask" => ask Declared {
        // A new question goes to its pad (the inbox unless named); waiting
        // on one asked before reads it.
        pads: &[PadField { field: "pad", does: Write, inbox_unless: Some("id") }],
        notes: &[("id", Read)],
        ..NONE
    },
    "report" => report READS_PAD,
    "token.create" => token_create owner("create tokens"),
    "token.list" => token_list owner("list tokens"),
    "token.revoke" => token_revoke owner("revoke tokens"),
    "agent.add" => agent_add owner("register agents"),
    "agent.list" => agent_list SCOPED,
    "agent.remove" => agent_remove owner("remove agents"),
    "agent.deliveries" => agent_deliveries SCOPED,
}

async fn entry_add(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let mut p: AddParams = parse("entry.add", params)?;
    if let Some(name) = c.guard.token() {
        p.author = Some(name.to_owned());
    }
    let looks_like = if p.check_duplicates {
        let author = model::entry_author(p.author.as_deref(), c.session.author.as_deref())?;
        c.engine
            .looks_like(&p.pad, &author, &p.content, &c.guard)
            .await?
            // The note it says it replaces is no news.
            .filter(|l| p.supersedes.as_deref() != Some(l.id.as_str()))
    } else {
        None
    };
    let entry = c
        .engine
        .add(p, c.session.author.as_deref(), &c.guard)
        .await?;
    Ok(reply(EntryResult { entry, looks_like }))
}

async fn entry_get(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: IdParams = parse("entry.get", params)?;
    Ok(reply(EntryResult::of(c.engine.get(&p.id).await?)))
}

async fn entry_update(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: UpdateParams = parse("entry.update", params)?;
    let by = actor(c.session);
    Ok(reply(EntryResult::of(c.engine.update(p, &by).await?)))
}

async fn entry_delete(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: DeleteParams = parse("entry.delete", params)?;
    let (gone, change) = c.engine.delete(p, &actor(c.session)).await?;
    Ok(reply(DeleteResult {
        deleted: true,
        id: gone.id,
        change: (change > 0).then_some(change),
    }))
}

async fn entry_history(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p = parse("entry.history", params)?;
    Ok(reply(c.engine.history(p, &c.guard).await?))
}

async fn entry_trash(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p = parse("entry.trash", params)?;
    Ok(reply(c.engine.trash(p, &c.guard).await?))
}

async fn entry_restore(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: RestoreParams = parse("entry.restore", params)?;
    let by = actor(c.session);
    Ok(reply(c.engine.restore(p, &by, &c.guard).await?))
}

async fn entry_purge(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: PurgeParams = parse("entry.purge", params)?;
    Ok(reply(c.engine.purge(p).await?))
}

async fn entry_changes(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p = parse("entry.changes", params)?;
    Ok(reply(c.engine.changes(p, &c.guard).await?))
}

async fn entry_list(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p = parse("entry.list", params)?;
    Ok(reply(c.engine.list(p, &c.guard).await?))
}

async fn search(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p = parse("search", params)?;
    Ok(reply(c.engine.search(p, &c.guard).await?))
}

async fn tags_list(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p = parse("tags.list", params)?;
    Ok(reply(c.engine.tags(p, &c.guard).await?))
}

async fn pad_list(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p = parse("pad.list", params)?;
    Ok(reply(PadListResult {
        pads: c.engine.pads(p, &c.guard).await?,
    }))
}

async fn pad_configure(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: ConfigureParams = parse("pad.configure", params)?;
    Ok(reply(PadResult {
        pad: c.engine.configure(p).await?,
    }))
}

async fn pad_touch(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: PadNameParams = parse("pad.touch", params)?;
    Ok(reply(PadResult {
        pad: c.engine.touch(p).await?,
    }))
}

async fn pad_clear(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: ClearParams = parse("pad.clear", params)?;
    let (deleted, change) = c.engine.clear(p, &actor(c.session)).await?;
    Ok(reply(ClearResult {
        deleted,
        change: (deleted > 0 && change > 0).then_some(change),
    }))
}

async fn pad_export(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: ExportParams = parse("pad.export", params)?;
    Ok(reply(c.engine.export(p, &c.guard).await?))
}

async fn subscribe(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: SubscribeParams = parse("subscribe", params)?;
    let session = c.session;
    if session.subscriptions.len() >= MAX_SUBSCRIPTIONS {
        return Err(Error::TooLarge {
            field: None,
            message: format!(
                "this connection already has {MAX_SUBSCRIPTIONS} subscriptions, the limit. Unsubscribe from one first, or subscribe once with a broader filter (several pads, tags or kinds in one subscription)."
            ),
            limit: MAX_SUBSCRIPTIONS as u64,
            got: session.subscriptions.len() as u64 + 1,
        });
    }
    let Some(out) = session.events.clone() else {
        return Err(Error::Unavailable(
            "this transport cannot deliver events; subscribe over the socket (pad watch) instead."
                .into(),
        ));
    };
    let mut sub = c.engine.subscribe(p, &c.guard)?;
    let id = sub.id;
    let (engine, access) = (c.engine.clone(), c.guard.access().clone());
    let task = tokio::spawn(async move {
        while let Some(mut event) = sub.next().await {
            // A token revoked since: its subscription ends, and nothing
            // more reaches it.
            let Ok(grant) = engine.grant(&access) else {
                break;
            };
            // Sealed as every answer is: no note it may not read is named.
            let guard = Guard::new(access.clone(), grant);
            if guard.seal(engine.db(), &mut event).await.is_err() {
                continue;
            }
            if out.send(event).await.is_err() {
                break;
            }
        }
    });
    session.subscriptions.insert(id, task.abort_handle());
    Ok(reply(SubscribeResult { subscription: id }))
}

async fn unsubscribe(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: UnsubscribeParams = parse("unsubscribe", params)?;
    match c.session.subscriptions.remove(&p.subscription) {
        Some(task) => {
            task.abort();
            Ok(reply(OkResult { ok: true }))
        }
        None => Err(Error::NotFound {
            field: "subscription",
            message: format!(
                "this connection has no subscription {}; its subscriptions are {:?}.",
                p.subscription,
                c.session.subscriptions.keys().collect::<Vec<_>>()
            ),
        }),
    }
}

async fn stats(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p = parse("stats", params)?;
    Ok(reply(c.engine.stats(p, &c.guard).await?))
}

async fn reindex(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let _: ReindexParams = parse("reindex", params)?;
    Ok(reply(c.engine.reindex().await?))
}

async fn inbox(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: InboxParams = parse("inbox", params)?;
    c.guard.own_inbox(p.author.as_deref())?;
    let author = c.session.author.as_deref();
    Ok(reply(c.engine.inbox(p, author, &c.guard).await?))
}

async fn plan_order(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: PlanParams = parse("plan.order", params)?;
    Ok(reply(c.engine.plan_order(p).await?))
}

async fn task_claim(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: ClaimParams = parse("task.claim", params)?;
    Ok(reply(c.engine.claim(p, c.session.author.as_deref()).await?))
}

async fn task_heartbeat(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: HeartbeatParams = parse("task.heartbeat", params)?;
    Ok(reply(EntryResult::of(c.engine.heartbeat(p).await?)))
}

async fn task_complete(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: CompleteParams = parse("task.complete", params)?;
    Ok(reply(EntryResult::of(c.engine.complete(p).await?)))
}

async fn task_fail(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: FailParams = parse("task.fail", params)?;
    Ok(reply(EntryResult::of(c.engine.fail(p).await?)))
}

async fn entry_share(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let mut p: ShareParams = parse("entry.share", params)?;
    if let Some(name) = c.guard.token() {
        p.author = Some(name.to_owned());
    }
    let author = c.session.author.as_deref();
    Ok(reply(c.engine.share(p, author, &c.guard).await?))
}

async fn entry_thread(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: IdParams = parse("entry.thread", params)?;
    Ok(reply(c.engine.thread(p, &c.guard).await?))
}

async fn ask(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let mut p: AskParams = parse("ask", params)?;
    if let Some(name) = c.guard.token() {
        p.author = Some(name.to_owned());
    }
    Ok(reply(c.engine.ask(p, c.session.author.as_deref()).await?))
}

async fn report(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p = parse("report", params)?;
    Ok(reply(c.engine.report(p, &c.guard).await?))
}

async fn token_create(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: TokenCreateParams = parse("token.create", params)?;
    Ok(reply(c.engine.token_create(p).await?))
}

async fn token_list(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let _: TokenListParams = parse("token.list", params)?;
    Ok(reply(c.engine.token_list().await?))
}

async fn token_revoke(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: TokenRevokeParams = parse("token.revoke", params)?;
    Ok(reply(c.engine.token_revoke(p).await?))
}

async fn agent_add(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: AgentAddParams = parse("agent.add", params)?;
    Ok(reply(c.engine.agent_add(p, &actor(c.session)).await?))
}

async fn agent_list(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p = parse("agent.list", params)?;
    Ok(reply(c.engine.agent_list(p, &c.guard).await?))
}

async fn agent_remove(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p: AgentNameParams = parse("agent.remove", params)?;
    Ok(reply(c.engine.agent_remove(p).await?))
}

async fn agent_deliveries(c: Call<'_>, params: Params<'_>) -> Result<Reply> {
    let p = parse("agent.deliveries", params)?;
    let caller = c.session.author.as_deref();
    Ok(reply(c.engine.deliveries(p, &c.guard, caller).await?))
}

#[cfg(test)]
mod tests {
    use super::TABLE;

    #[test]
    fn the_table_has_every_method_of_the_protocol_once() {
        let names: Vec<&str> = TABLE.iter().map(|(m, ..)| *m).collect();
        let protocol: Vec<&str> = crate::protocol::METHODS
            .iter()
            .copied()
            .filter(|m| *m != "hello")
            .collect();
        assert_eq!(names, protocol);
    }
}

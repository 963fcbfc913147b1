//! The methods: one row of `TABLE` per protocol method (`hello` aside, as
//! it sets up the session the others run in), each a short handler that
//! parses its params, asks the call's guard, and calls the engine.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use super::{actor, parse, reply, Reply, Session, MAX_SUBSCRIPTIONS};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::guard::Guard;
use crate::model;
use crate::protocol::*;

/// One call: the engine, the connection's session and the call's guard.
pub(super) struct Call<'a> {
    pub engine: &'a Engine,
    pub session: &'a mut Session,
    pub guard: Guard,
}

type Handler =
    for<'a> fn(Call<'a>, Option<Value>) -> Pin<Box<dyn Future<Output = Result<Reply>> + Send + 'a>>;

macro_rules! table {
    ($($method:literal => $handler:ident),* $(,)?) => {
        /// Every method but `hello`, in `protocol::METHODS`'s order.
        pub(super) const TABLE: &[(&str, Handler)] = &[
            $(($method, |c, p| Box::pin($handler(c, p)))),*
        ];
    };
}

table! {
    "entry.add" => entry_add,
    "entry.get" => entry_get,
    "entry.update" => entry_update,
    "entry.delete" => entry_delete,
    "entry.history" => entry_history,
    "entry.trash" => entry_trash,
    "entry.restore" => entry_restore,
    "entry.purge" => entry_purge,
    "entry.changes" => entry_changes,
    "entry.list" => entry_list,
    "search" => search,
    "tags.list" => tags_list,
    "pad.list" => pad_list,
    "pad.configure" => pad_configure,
    "pad.touch" => pad_touch,
    "pad.clear" => pad_clear,
    "pad.export" => pad_export,
    "subscribe" => subscribe,
    "unsubscribe" => unsubscribe,
    "stats" => stats,
    "reindex" => reindex,
    "inbox" => inbox,
    "plan.order" => plan_order,
    "task.claim" => task_claim,
    "task.heartbeat" => task_heartbeat,
    "task.complete" => task_complete,
    "task.fail" => task_fail,
    "entry.share" => entry_share,
    "entry.thread" => entry_thread,
    "ask" => ask,
    "report" => report,
    "token.create" => token_create,
    "token.list" => token_list,
    "token.revoke" => token_revoke,
    "agent.add" => agent_add,
    "agent.list" => agent_list,
    "agent.remove" => agent_remove,
    "agent.deliveries" => agent_deliveries,
}

async fn entry_add(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let mut p: AddParams = parse("entry.add", params)?;
    if let Some(name) = c.guard.token() {
        p.author = Some(name.to_owned());
    }
    c.guard.pad(&p.pad, "pad", true)?;
    c.guard
        .hand_to(&p.to, |a| c.engine.is_registered_agent(a))?;
    if let Some(parent) = &mut p.reply_to {
        *parent = c
            .guard
            .entry(c.engine.db(), parent, false)
            .await
            .map_err(|e| e.for_field("reply_to"))?;
    }
    // Superseding hides the older note from its pad's readers: the caller
    // must be able to write there.
    if let Some(older) = &mut p.supersedes {
        *older = c
            .guard
            .entry(c.engine.db(), older, true)
            .await
            .map_err(|e| e.for_field("supersedes"))?;
    }
    // A token's task may wait only on tasks it can read (else it could
    // watch a foreign task turn ready in plan.order).
    for dep in &mut p.depends_on {
        *dep = c
            .guard
            .entry(c.engine.db(), dep, false)
            .await
            .map_err(|e| e.for_field("depends_on"))?;
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

async fn entry_get(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p: IdParams = parse("entry.get", params)?;
    let id = c.guard.entry(c.engine.db(), &p.id, false).await?;
    Ok(reply(EntryResult::of(c.engine.get(&id).await?)))
}

async fn entry_update(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let mut p: UpdateParams = parse("entry.update", params)?;
    p.id = c.guard.entry(c.engine.db(), &p.id, true).await?;
    if let Some(Some(older)) = &mut p.supersedes {
        *older = c
            .guard
            .entry(c.engine.db(), older, true)
            .await
            .map_err(|e| e.for_field("supersedes"))?;
    }
    for dep in p.depends_on.iter_mut().flatten() {
        *dep = c
            .guard
            .entry(c.engine.db(), dep, false)
            .await
            .map_err(|e| e.for_field("depends_on"))?;
    }
    let by = actor(c.session);
    Ok(reply(EntryResult::of(c.engine.update(p, &by).await?)))
}

async fn entry_delete(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let mut p: DeleteParams = parse("entry.delete", params)?;
    p.id = c.guard.entry(c.engine.db(), &p.id, true).await?;
    let (gone, change) = c.engine.delete(p, &actor(c.session)).await?;
    Ok(reply(DeleteResult {
        deleted: true,
        id: gone.id,
        change: (change > 0).then_some(change),
    }))
}

async fn entry_history(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p = parse("entry.history", params)?;
    Ok(reply(c.engine.history(p, &c.guard).await?))
}

async fn entry_trash(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p = parse("entry.trash", params)?;
    Ok(reply(c.engine.trash(p, &c.guard).await?))
}

async fn entry_restore(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p: RestoreParams = parse("entry.restore", params)?;
    c.guard.any_write()?;
    let by = actor(c.session);
    Ok(reply(c.engine.restore(p, &by, &c.guard).await?))
}

async fn entry_purge(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p: PurgeParams = parse("entry.purge", params)?;
    c.guard.owner_only("purge the history and trash for good")?;
    Ok(reply(c.engine.purge(p).await?))
}

async fn entry_changes(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p = parse("entry.changes", params)?;
    Ok(reply(c.engine.changes(p, &c.guard).await?))
}

async fn entry_list(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p = parse("entry.list", params)?;
    Ok(reply(c.engine.list(p, &c.guard).await?))
}

async fn search(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p = parse("search", params)?;
    Ok(reply(c.engine.search(p, &c.guard).await?))
}

async fn tags_list(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p = parse("tags.list", params)?;
    Ok(reply(c.engine.tags(p, &c.guard).await?))
}

async fn pad_list(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p = parse("pad.list", params)?;
    Ok(reply(PadListResult {
        pads: c.engine.pads(p, &c.guard).await?,
    }))
}

async fn pad_configure(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p: ConfigureParams = parse("pad.configure", params)?;
    c.guard.pad(&p.name, "name", true)?;
    Ok(reply(PadResult {
        pad: c.engine.configure(p).await?,
    }))
}

async fn pad_touch(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p: PadNameParams = parse("pad.touch", params)?;
    c.guard.pad(&p.name, "name", true)?;
    Ok(reply(PadResult {
        pad: c.engine.touch(p).await?,
    }))
}

async fn pad_clear(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p: ClearParams = parse("pad.clear", params)?;
    c.guard.pad(&p.name, "name", true)?;
    let (deleted, change) = c.engine.clear(p, &actor(c.session)).await?;
    Ok(reply(ClearResult {
        deleted,
        change: (deleted > 0 && change > 0).then_some(change),
    }))
}

async fn pad_export(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p: ExportParams = parse("pad.export", params)?;
    c.guard.pad(&p.name, "name", false)?;
    Ok(reply(c.engine.export(p).await?))
}

async fn subscribe(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
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
        while let Some(event) = sub.next().await {
            // A token revoked since: its subscription ends, and nothing
            // more reaches it.
            if engine.grant(&access).is_err() {
                break;
            }
            if out.send(event).await.is_err() {
                break;
            }
        }
    });
    session.subscriptions.insert(id, task.abort_handle());
    Ok(reply(SubscribeResult { subscription: id }))
}

async fn unsubscribe(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
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

async fn stats(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p = parse("stats", params)?;
    Ok(reply(c.engine.stats(p, &c.guard).await?))
}

async fn reindex(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let _: ReindexParams = parse("reindex", params)?;
    c.guard.owner_only("rebuild the semantic index")?;
    Ok(reply(c.engine.reindex().await?))
}

async fn inbox(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p: InboxParams = parse("inbox", params)?;
    c.guard.own_inbox(p.author.as_deref())?;
    let author = c.session.author.as_deref();
    Ok(reply(c.engine.inbox(p, author, &c.guard).await?))
}

async fn plan_order(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p: PlanParams = parse("plan.order", params)?;
    c.guard.pad(&p.pad, "pad", false)?;
    Ok(reply(c.engine.plan_order(p).await?))
}

async fn task_claim(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p: ClaimParams = parse("task.claim", params)?;
    c.guard.pad(&p.pad, "pad", true)?;
    Ok(reply(c.engine.claim(p, c.session.author.as_deref()).await?))
}

async fn task_heartbeat(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let mut p: HeartbeatParams = parse("task.heartbeat", params)?;
    p.id = c.guard.entry(c.engine.db(), &p.id, true).await?;
    Ok(reply(EntryResult::of(c.engine.heartbeat(p).await?)))
}

async fn task_complete(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let mut p: CompleteParams = parse("task.complete", params)?;
    p.id = c.guard.entry(c.engine.db(), &p.id, true).await?;
    Ok(reply(EntryResult::of(c.engine.complete(p).await?)))
}

async fn task_fail(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let mut p: FailParams = parse("task.fail", params)?;
    p.id = c.guard.entry(c.engine.db(), &p.id, true).await?;
    Ok(reply(EntryResult::of(c.engine.fail(p).await?)))
}

async fn entry_share(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let mut p: ShareParams = parse("entry.share", params)?;
    p.id = c.guard.entry(c.engine.db(), &p.id, false).await?;
    if let Some(name) = c.guard.token() {
        p.author = Some(name.to_owned());
    }
    let author = c.session.author.as_deref();
    Ok(reply(c.engine.share(p, author, &c.guard).await?))
}

async fn entry_thread(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let mut p: IdParams = parse("entry.thread", params)?;
    p.id = c.guard.entry(c.engine.db(), &p.id, false).await?;
    Ok(reply(c.engine.thread(p, &c.guard).await?))
}

async fn ask(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let mut p: AskParams = parse("ask", params)?;
    if let Some(name) = c.guard.token() {
        p.author = Some(name.to_owned());
    }
    match &mut p.id {
        // Waiting on a question asked before: reading it suffices.
        Some(id) => *id = c.guard.entry(c.engine.db(), id, false).await?,
        None => c
            .guard
            .pad(p.pad.as_deref().unwrap_or(model::INBOX), "pad", true)?,
    }
    Ok(reply(c.engine.ask(p, c.session.author.as_deref()).await?))
}

async fn report(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p = parse("report", params)?;
    Ok(reply(c.engine.report(p, &c.guard).await?))
}

async fn token_create(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p: TokenCreateParams = parse("token.create", params)?;
    c.guard.owner_only("create tokens")?;
    Ok(reply(c.engine.token_create(p).await?))
}

async fn token_list(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let _: TokenListParams = parse("token.list", params)?;
    c.guard.owner_only("list tokens")?;
    Ok(reply(c.engine.token_list().await?))
}

async fn token_revoke(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p: TokenRevokeParams = parse("token.revoke", params)?;
    c.guard.owner_only("revoke tokens")?;
    Ok(reply(c.engine.token_revoke(p).await?))
}

async fn agent_add(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p: AgentAddParams = parse("agent.add", params)?;
    c.guard.owner_only("register agents")?;
    Ok(reply(c.engine.agent_add(p, &actor(c.session)).await?))
}

async fn agent_list(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p = parse("agent.list", params)?;
    Ok(reply(c.engine.agent_list(p, &c.guard).await?))
}

async fn agent_remove(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p: AgentNameParams = parse("agent.remove", params)?;
    c.guard.owner_only("remove agents")?;
    Ok(reply(c.engine.agent_remove(p).await?))
}

async fn agent_deliveries(c: Call<'_>, params: Option<Value>) -> Result<Reply> {
    let p = parse("agent.deliveries", params)?;
    Ok(reply(c.engine.deliveries(p, &c.guard).await?))
}

#[cfg(test)]
mod tests {
    use super::TABLE;

    #[test]
    fn the_table_has_every_method_of_the_protocol_once() {
        let names: Vec<&str> = TABLE.iter().map(|(m, _)| *m).collect();
        let protocol: Vec<&str> = crate::protocol::METHODS
            .iter()
            .copied()
            .filter(|m| *m != "hello")
            .collect();
        assert_eq!(names, protocol);
    }
}

//! The methods: one row of `TABLE` per protocol method (`hello` aside, as
//! it sets up the session the others run in). A row is the method's type
//! (`protocol::method`: its name, params and answer), its handler and what
//! it declares beside its params' fields (`declared::Declared`). The row
//! parses the params once into their type, takes their idempotency key
//! (`storage::once`), enforces what the type and the declaration say on
//! that value (`declared::enforce`; a check that no longer finds what a
//! keyed write stored already named gives way to its key), and hands the
//! very value to the handler, which calls the engine and returns the
//! answer's type.

use std::future::Future;
use std::pin::Pin;

use super::declared::{self, Answer, Declared, Field, Touches};
use super::{actor, parse, sealed_reply, Params, Reply, Session, MAX_SUBSCRIPTIONS};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::guard::Guard;
use crate::model;
use crate::protocol::method::*;
use crate::protocol::*;
use crate::seal;
use crate::storage::once::Key;

use super::declared::Answer::Scoped;

const NONE: Declared = Declared::NONE;

/// One call: the engine, the connection's session, the call's guard and
/// its idempotency key (`storage::once`), its caller's own.
pub(super) struct Call<'a> {
    pub engine: &'a Engine,
    pub session: &'a mut Session,
    pub guard: Guard,
    pub key: Option<Key>,
}

type Run =
    for<'a> fn(Call<'a>, Params<'a>) -> Pin<Box<dyn Future<Output = Result<Reply>> + Send + 'a>>;

/// One method: its name, how a call runs, what it declares, and the fields
/// its params type declares.
pub(super) struct Row {
    pub name: &'static str,
    pub run: Run,
    pub declared: Declared,
    pub fields: &'static [Field],
}

macro_rules! table {
    ($($method:ident => $handler:ident $declared:expr),* $(,)?) => {
        /// Every method but `hello`, in `protocol::METHODS`'s order.
        pub(super) const TABLE: &[Row] = &[
            $(Row {
                name: <$method as Method>::NAME,
                run: |mut c, p| Box::pin(async move {
                    const DECLARED: Declared = $declared;
                    let mut params: <$method as Method>::Params =
                        parse(<$method as Method>::NAME, p)?;
                    // Named by the params as sent, before the checks
                    // rewrite them.
                    c.key = Key::of(
                        c.guard.access(),
                        <$method as Method>::NAME,
                        params.sent_key(),
                        &params,
                    )?;
                    if let Err(e) = declared::enforce(&DECLARED, &c.guard, c.engine, &mut params).await {
                        unless_stored(&mut c, e).await?;
                    }
                    let (guard, engine) = (c.guard.clone(), c.engine);
                    let answer: <$method as Method>::Answer = match $handler(c, params).await {
                        Ok(answer) => answer,
                        Err(e) => return Err(seal::error(&guard, engine.db(), e).await),
                    };
                    // Every answer through the seal: what the caller may
                    // not read is named nowhere in it.
                    sealed_reply(&guard, engine, &answer).await
                }),
                declared: $declared,
                fields: <<$method as Method>::Params as Touches>::FIELDS,
            }),*
        ];
    };
}

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
    // Its duplicate hint is drawn from what the caller may read.
    EntryAdd => entry_add SCOPED,
    EntryGet => entry_get NONE,
    EntryUpdate => entry_update NONE,
    EntryDelete => entry_delete NONE,
    EntryHistory => entry_history SCOPED,
    EntryTrash => entry_trash SCOPED,
    EntryRestore => entry_restore Declared { writes_found: true, answer: Scoped, ..NONE },
    EntryPurge => entry_purge owner("purge the history and trash for good"),
    EntryChanges => entry_changes SCOPED,
    EntryList => entry_list SCOPED,
    Search => search SCOPED,
    TagsList => tags_list SCOPED,
    PadList => pad_list SCOPED,
    // A pad's limits and lifetime are the person's: the owner's alone.
    PadConfigure => pad_configure owner("change a pad's settings (its limits, lifetime or archive)"),
    PadTouch => pad_touch NONE,
    PadClear => pad_clear NONE,
    PadExport => pad_export NONE,
    Subscribe => subscribe SCOPED,
    Unsubscribe => unsubscribe Declared { answer: Answer::Session, ..NONE },
    Stats => stats SCOPED,
    Reindex => reindex owner("rebuild the semantic index"),
    Inbox => inbox SCOPED,
    PlanOrder => plan_order NONE,
    TaskClaim => task_claim NONE,
    TaskHeartbeat => task_heartbeat NONE,
    TaskComplete => task_complete NONE,
    TaskFail => task_fail NONE,
    EntryShare => entry_share NONE,
    EntryThread => entry_thread SCOPED,
    Ask => ask NONE,
    Report => report SCOPED,
    TokenCreate => token_create owner("create tokens"),
    TokenList => token_list owner("list tokens"),
    TokenRevoke => token_revoke owner("revoke tokens"),
    AgentAdd => agent_add owner("register agents"),
    AgentList => agent_list SCOPED,
    AgentRemove => agent_remove owner("remove agents"),
    AgentDeliveries => agent_deliveries SCOPED,
}

/// A check refused the call with `e`: refused still, unless it is the
/// retry of a keyed write stored already, which its key answers (the store
/// finds it and writes nothing) though what the write named is gone now
/// (its parent deleted, the note it superseded hidden since). The key then
/// carries the refusal, for the store to give should its row be gone by
/// the time it looks (`Key::unless_kept`).
async fn unless_stored(c: &mut Call<'_>, e: Error) -> Result<()> {
    let (Some(key), Error::NotFound { field, message }) = (&mut c.key, &e) else {
        return Err(e);
    };
    if !c.engine.db().kept(key, c.engine.now()).await? {
        return Err(e);
    }
    key.unless_kept = Some((field, message.clone()));
    Ok(())
}

async fn entry_add(c: Call<'_>, p: AddParams) -> Result<EntryResult> {
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
        .add(p, c.session.author.as_deref(), &c.guard, c.key)
        .await?;
    // A retry's answer: the note itself is no news.
    let looks_like = looks_like.filter(|l| l.id != entry.id);
    Ok(EntryResult { entry, looks_like })
}

async fn entry_get(c: Call<'_>, p: IdParams) -> Result<EntryResult> {
    Ok(EntryResult::of(c.engine.get(&p.id).await?))
}

async fn entry_update(c: Call<'_>, p: UpdateParams) -> Result<EntryResult> {
    let by = actor(c.session);
    Ok(EntryResult::of(c.engine.update(p, &by).await?))
}

async fn entry_delete(c: Call<'_>, p: DeleteParams) -> Result<DeleteResult> {
    let (gone, change) = c.engine.delete(p, &actor(c.session)).await?;
    Ok(DeleteResult {
        deleted: true,
        id: gone.id,
        change: (change > 0).then_some(change),
    })
}

async fn entry_history(c: Call<'_>, p: HistoryParams) -> Result<HistoryResult> {
    c.engine.history(p, &c.guard).await
}

async fn entry_trash(c: Call<'_>, p: TrashParams) -> Result<TrashResult> {
    c.engine.trash(p, &c.guard).await
}

async fn entry_restore(c: Call<'_>, p: RestoreParams) -> Result<RestoreResult> {
    let by = actor(c.session);
    c.engine.restore(p, &by, &c.guard).await
}

async fn entry_purge(c: Call<'_>, p: PurgeParams) -> Result<PurgeResult> {
    c.engine.purge(p).await
}

async fn entry_changes(c: Call<'_>, p: ChangesParams) -> Result<ChangesResult> {
    c.engine.changes(p, &c.guard).await
}

async fn entry_list(c: Call<'_>, p: ListParams) -> Result<ListResult> {
    c.engine.list(p, &c.guard).await
}

async fn search(c: Call<'_>, p: SearchParams) -> Result<SearchResult> {
    c.engine.search(p, &c.guard).await
}

async fn tags_list(c: Call<'_>, p: TagsParams) -> Result<TagsResult> {
    c.engine.tags(p, &c.guard).await
}

async fn pad_list(c: Call<'_>, p: PadListParams) -> Result<PadListResult> {
    Ok(PadListResult {
        pads: c.engine.pads(p, &c.guard).await?,
    })
}

async fn pad_configure(c: Call<'_>, p: ConfigureParams) -> Result<PadResult> {
    Ok(PadResult {
        pad: c.engine.configure(p).await?,
    })
}

async fn pad_touch(c: Call<'_>, p: PadNameParams) -> Result<PadResult> {
    Ok(PadResult {
        pad: c.engine.touch(p).await?,
    })
}

async fn pad_clear(c: Call<'_>, p: ClearParams) -> Result<ClearResult> {
    let (deleted, change) = c.engine.clear(p, &actor(c.session)).await?;
    Ok(ClearResult {
        deleted,
        change: (deleted > 0 && change > 0).then_some(change),
    })
}

async fn pad_export(c: Call<'_>, p: ExportParams) -> Result<ExportResult> {
    c.engine.export(p, &c.guard).await
}

async fn subscribe(c: Call<'_>, p: SubscribeParams) -> Result<SubscribeResult> {
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
    let (engine, access, held) = (c.engine.clone(), c.guard.access().clone(), c.guard.clone());
    let task = tokio::spawn(async move {
        // A token revoked: its subscription ends within a second, even
        // with no event to come.
        let mut revoked = std::pin::pin!(engine.revoked(&held));
        loop {
            let notice = tokio::select! {
                n = sub.next() => n,
                _ = &mut revoked => None,
            };
            let Some(notice) = notice else {
                break;
            };
            // A token revoked since: its subscription ends, and nothing
            // more reaches it.
            let Ok(grant) = engine.grant(&access) else {
                break;
            };
            // Sealed as every answer is: no note it may not read is named.
            let guard = Guard::new(access.clone(), grant);
            let params = sub.params(&notice);
            let Ok(event) = seal::to_value(&guard, engine.db(), &params).await else {
                continue;
            };
            if out.send(event).await.is_err() {
                break;
            }
        }
    });
    session.subscriptions.insert(id, task.abort_handle());
    Ok(SubscribeResult { subscription: id })
}

async fn unsubscribe(c: Call<'_>, p: UnsubscribeParams) -> Result<OkResult> {
    match c.session.subscriptions.remove(&p.subscription) {
        Some(task) => {
            task.abort();
            Ok(OkResult { ok: true })
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

async fn stats(c: Call<'_>, p: StatsParams) -> Result<StatsResult> {
    c.engine.stats(p, &c.guard).await
}

async fn reindex(c: Call<'_>, _: ReindexParams) -> Result<ReindexResult> {
    c.engine.reindex().await
}

async fn inbox(c: Call<'_>, p: InboxParams) -> Result<InboxResult> {
    let author = c.session.author.as_deref();
    c.engine.inbox(p, author, &c.guard).await
}

async fn plan_order(c: Call<'_>, p: PlanParams) -> Result<PlanResult> {
    c.engine.plan_order(p).await
}

async fn task_claim(c: Call<'_>, p: ClaimParams) -> Result<ClaimResult> {
    c.engine.claim(p, c.session.author.as_deref(), c.key).await
}

async fn task_heartbeat(c: Call<'_>, p: HeartbeatParams) -> Result<EntryResult> {
    Ok(EntryResult::of(c.engine.heartbeat(p).await?))
}

async fn task_complete(c: Call<'_>, p: CompleteParams) -> Result<EntryResult> {
    Ok(EntryResult::of(c.engine.complete(p).await?))
}

async fn task_fail(c: Call<'_>, p: FailParams) -> Result<EntryResult> {
    Ok(EntryResult::of(c.engine.fail(p).await?))
}

async fn entry_share(c: Call<'_>, p: ShareParams) -> Result<ShareResult> {
    let author = c.session.author.as_deref();
    c.engine.share(p, author, &c.guard).await
}

async fn entry_thread(c: Call<'_>, p: IdParams) -> Result<ThreadResult> {
    c.engine.thread(p, &c.guard).await
}

async fn ask(c: Call<'_>, p: AskParams) -> Result<AskResult> {
    c.engine
        .ask(p, c.session.author.as_deref(), &c.guard, c.key)
        .await
}

async fn report(c: Call<'_>, p: ReportParams) -> Result<ReportResult> {
    c.engine.report(p, &c.guard).await
}

async fn token_create(c: Call<'_>, p: TokenCreateParams) -> Result<TokenCreateResult> {
    c.engine.token_create(p).await
}

async fn token_list(c: Call<'_>, _: TokenListParams) -> Result<TokenListResult> {
    c.engine.token_list().await
}

async fn token_revoke(c: Call<'_>, p: TokenRevokeParams) -> Result<TokenRevokeResult> {
    c.engine.token_revoke(p).await
}

async fn agent_add(c: Call<'_>, p: AgentAddParams) -> Result<AgentResult> {
    c.engine.agent_add(p, &actor(c.session)).await
}

async fn agent_list(c: Call<'_>, p: AgentListParams) -> Result<AgentListResult> {
    c.engine.agent_list(p, &c.guard).await
}

async fn agent_remove(c: Call<'_>, p: AgentNameParams) -> Result<AgentRemoveResult> {
    c.engine.agent_remove(p).await
}

async fn agent_deliveries(c: Call<'_>, p: DeliveriesParams) -> Result<DeliveriesResult> {
    let caller = c.session.author.as_deref();
    c.engine.deliveries(p, &c.guard, caller).await
}

#[cfg(test)]
mod tests {
    use super::declared::{Answer, Role};
    use super::TABLE;

    const DOC: &str = "docs/protocol.md";
    const BEGIN: &str = "<!-- The method list: generated from src/rpc/methods.rs's table; `UPDATE_DOCS=1 cargo test --lib methods` rewrites it. -->\n";
    const END: &str = "<!-- end of the method list -->";

    /// The method list in docs/protocol.md, from the table: each method,
    /// what its params name and what it does there, who may call it and
    /// how its answer is drawn for a token.
    fn method_list() -> String {
        let mut out = String::from(BEGIN);
        out.push_str("| method | names (what a token's call is checked for) | a token | its answer to a token |\n|---|---|---|---|\n");
        out.push_str("| `hello` | `token`, `author` (a token's name wins) | any | its access |\n");
        for row in TABLE {
            let names: Vec<String> = row
                .fields
                .iter()
                .map(|f| {
                    let what = match f.role {
                        Role::Pad(d) => format!("pad, {}", format!("{d:?}").to_lowercase()),
                        Role::Note(d) => format!("note, {}", format!("{d:?}").to_lowercase()),
                        Role::Agents => "agents it hands work to".into(),
                        Role::Actor => "who acts: its own name".into(),
                    };
                    format!("`{}` ({what})", f.name)
                })
                .collect();
            let names = if names.is_empty() {
                "—".into()
            } else {
                names.join(", ")
            };
            let who = match (row.declared.owner_only, row.declared.writes_found) {
                (Some(_), _) => "refused: the owner's",
                (None, true) => "one that writes",
                (None, false) => "as its grant says",
            };
            let answer = match row.declared.answer {
                Answer::Named => "about what it names",
                Answer::Scoped => "through its scope",
                Answer::Session => "about its connection",
            };
            out.push_str(&format!(
                "| `{}` | {names} | {who} | {answer} |\n",
                row.name
            ));
        }
        out.push_str(END);
        out
    }

    #[test]
    fn the_method_list_in_the_docs_is_the_table() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(DOC);
        let have = std::fs::read_to_string(&path).expect("docs/protocol.md");
        let (Some(start), Some(end)) = (have.find(BEGIN), have.find(END)) else {
            panic!("{DOC} has no generated method list; put {BEGIN:?} and {END:?} where it goes");
        };
        let want = method_list();
        if have[start..end + END.len()] == want {
            return;
        }
        if std::env::var_os("UPDATE_DOCS").is_some_and(|v| v == "1") {
            let doc = format!("{}{want}{}", &have[..start], &have[end + END.len()..]);
            std::fs::write(&path, doc).expect("write docs/protocol.md");
            return;
        }
        panic!("{DOC}'s method list is out of date with the table; run `UPDATE_DOCS=1 cargo test --lib methods` and commit it");
    }

    #[test]
    fn the_table_has_every_method_of_the_protocol_once() {
        let names: Vec<&str> = TABLE.iter().map(|r| r.name).collect();
        let protocol: Vec<&str> = crate::protocol::METHODS
            .iter()
            .copied()
            .filter(|m| *m != "hello")
            .collect();
        assert_eq!(names, protocol);
    }
}

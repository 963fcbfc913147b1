//! Each method as a type: its name, what it is sent and what it answers.
//! The CLI sends requests through them (`Client::request`), so a request
//! and its answer are the engine's own types, and `protocol.ts`'s
//! `Params` and `Results` (the UI's) are generated from the same list.

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::*;

/// A method of the protocol: `NAME` is sent `Params` and answers `Answer`.
pub trait Method {
    const NAME: &'static str;
    type Params: Serialize;
    type Answer: Serialize + DeserializeOwned;
}

macro_rules! methods {
    ($($ty:ident $name:literal $params:ty => $answer:ty,)*) => {
        $(
            #[doc = concat!("`", $name, "`")]
            pub enum $ty {}
            impl Method for $ty {
                const NAME: &'static str = $name;
                type Params = $params;
                type Answer = $answer;
            }
        )*
        /// Each method with its answer's TypeScript name, in `METHODS` order.
        #[cfg(test)]
        pub(crate) fn method_results(cfg: &ts_rs::Config) -> Vec<(&'static str, String)> {
            use ts_rs::TS;
            vec![$(($name, <$answer>::name(cfg)),)*]
        }
        /// Each method with its params' TypeScript name and declaration,
        /// in `METHODS` order (a type two methods share comes twice).
        #[cfg(test)]
        pub(crate) fn method_params(cfg: &ts_rs::Config) -> Vec<(&'static str, String, String)> {
            use ts_rs::TS;
            vec![$((
                $name,
                <$params>::name(cfg),
                format!("{}export {}\n", <$params>::docs().unwrap_or_default(), <$params>::decl(cfg)),
            ),)*]
        }
    };
}

methods! {
    Hello "hello" HelloParams => HelloResult,
    EntryAdd "entry.add" AddParams => EntryResult,
    EntryGet "entry.get" IdParams => EntryResult,
    EntryUpdate "entry.update" UpdateParams => EntryResult,
    EntryDelete "entry.delete" DeleteParams => DeleteResult,
    EntryHistory "entry.history" HistoryParams => HistoryResult,
    EntryTrash "entry.trash" TrashParams => TrashResult,
    EntryRestore "entry.restore" RestoreParams => RestoreResult,
    EntryPurge "entry.purge" PurgeParams => PurgeResult,
    EntryChanges "entry.changes" ChangesParams => ChangesResult,
    EntryList "entry.list" ListParams => ListResult,
    Search "search" SearchParams => SearchResult,
    TagsList "tags.list" TagsParams => TagsResult,
    PadList "pad.list" PadListParams => PadListResult,
    PadConfigure "pad.configure" ConfigureParams => PadResult,
    PadTouch "pad.touch" PadNameParams => PadResult,
    PadClear "pad.clear" ClearParams => ClearResult,
    PadExport "pad.export" ExportParams => ExportResult,
    Subscribe "subscribe" SubscribeParams => SubscribeResult,
    Unsubscribe "unsubscribe" UnsubscribeParams => OkResult,
    Stats "stats" StatsParams => StatsResult,
    Reindex "reindex" ReindexParams => ReindexResult,
    Inbox "inbox" InboxParams => InboxResult,
    PlanOrder "plan.order" PlanParams => PlanResult,
    TaskClaim "task.claim" ClaimParams => ClaimResult,
    TaskHeartbeat "task.heartbeat" HeartbeatParams => EntryResult,
    TaskComplete "task.complete" CompleteParams => EntryResult,
    TaskFail "task.fail" FailParams => EntryResult,
    EntryShare "entry.share" ShareParams => ShareResult,
    EntryThread "entry.thread" IdParams => ThreadResult,
    Ask "ask" AskParams => AskResult,
    Report "report" ReportParams => ReportResult,
    TokenCreate "token.create" TokenCreateParams => TokenCreateResult,
    TokenList "token.list" TokenListParams => TokenListResult,
    TokenRevoke "token.revoke" TokenRevokeParams => TokenRevokeResult,
    AgentAdd "agent.add" AgentAddParams => AgentResult,
    AgentList "agent.list" AgentListParams => AgentListResult,
    AgentRemove "agent.remove" AgentNameParams => AgentRemoveResult,
    AgentDeliveries "agent.deliveries" DeliveriesParams => DeliveriesResult,
}

/// A write that takes an idempotency key: the same key from the same caller
/// within a day writes once and answers as the first call did. Clients put
/// a fresh key in every such write and send the same params again, key and
/// all, when they retry it (`client::write`).
pub trait Keyed: Method {
    /// The params' `idempotency_key`.
    fn key(params: &mut Self::Params) -> &mut Option<String>;
}

impl Keyed for EntryAdd {
    fn key(params: &mut AddParams) -> &mut Option<String> {
        &mut params.idempotency_key
    }
}

impl Keyed for Ask {
    fn key(params: &mut AskParams) -> &mut Option<String> {
        &mut params.idempotency_key
    }
}

impl Keyed for TaskClaim {
    fn key(params: &mut ClaimParams) -> &mut Option<String> {
        &mut params.idempotency_key
    }
}

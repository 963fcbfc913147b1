//! Reaching agents: the params and results of `agent.add`, `agent.list`,
//! `agent.remove` and `agent.deliveries`, and the delivery of an addressed
//! note (docs/protocol.md, "Reaching agents").

use serde::{Deserialize, Serialize};

use crate::seal::NoteRef;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct AgentAddParams {
    /// The author name the agent's replies carry, and what notes address.
    pub name: String,
    /// The agent's A2A endpoint, e.g. Agent Zero's `http://HOST:PORT/a2a/t-TOKEN`.
    pub url: String,
    /// A bearer token the endpoint wants (when the URL does not carry one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Replace an agent already registered under this name.
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub replace: bool,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct AgentNameParams {
    pub name: String,
    /// Remove it even with notes not yet delivered to it, which are then
    /// dropped; without, such a removal is refused and says how many wait.
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<bool>", optional))]
    pub drop_pending: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct AgentListParams {
    /// Authors seen within this many seconds are listed (default one day).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seen_within: Option<u64>,
}

/// One skill from an agent's card.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct AgentSkill {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
}

/// What the agent's card says about it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct AgentCard {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub skills: Vec<AgentSkill>,
}

/// A registered agent as answers show it: never its token, and its URL
/// with any secret in it (Agent Zero's `t-TOKEN`, a query) masked.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct AgentInfo {
    pub name: String,
    pub url: String,
    pub card: Option<AgentCard>,
    /// Whether the last call to the agent got through (`null`: not tried).
    pub reachable: Option<bool>,
    /// Why the last call failed.
    pub error: Option<String>,
    pub added_at: String,
    pub added_by: String,
    /// Notes being worked on by the agent right now.
    #[serde(default)]
    pub active: usize,
}

/// An entry in brief, for the roster.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Brief {
    pub id: String,
    pub pad: String,
    pub content: String,
    pub at: String,
}

/// An author seen recently: connected, or writing.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SeenAuthor {
    pub author: String,
    /// The last call or write.
    pub last_seen: String,
    /// Connections saying hello as this author right now.
    pub connected: usize,
    /// Registered with an A2A endpoint (`agent.add`).
    pub registered: bool,
    /// The pad it last wrote to.
    pub pad: Option<String>,
    pub last_note: Option<Brief>,
    /// Tasks it holds (`doing`).
    pub claimed: Vec<Brief>,
    /// Its questions nobody has answered yet.
    pub open_questions: Vec<Brief>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct AgentListResult {
    pub agents: Vec<AgentInfo>,
    /// Authors seen recently, the most recent first (the person too).
    pub seen: Vec<SeenAuthor>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct AgentResult {
    pub agent: AgentInfo,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct AgentRemoveResult {
    pub removed: bool,
    /// Deliveries to it that were dropped.
    pub dropped: usize,
}

/// Where an addressed note stands with one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Not delivered yet: being tried, with back-off (`detail` says why it failed).
    Pending,
    /// The agent accepted it (its task is submitted).
    Sent,
    Working,
    /// The agent asked a question (`question`) and waits for the person.
    WaitingForYou,
    Done,
    /// The agent failed, or it could not be reached for long (the person is asked).
    Failed,
}

impl DeliveryState {
    pub fn finished(self) -> bool {
        matches!(self, DeliveryState::Done | DeliveryState::Failed)
    }
}

/// One addressed note's conversation with one agent.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Delivery {
    /// The addressed note: in the delivery's own pad, so whoever sees the
    /// delivery may read it (a plain id, not a `NoteRef`; deleted, it is
    /// still the id the delivery was for).
    pub entry: String,
    pub pad: String,
    pub agent: String,
    pub state: DeliveryState,
    /// "not delivered: …", the agent's status line, or its failure.
    pub detail: Option<String>,
    /// The A2A task being followed.
    pub task: Option<String>,
    /// The open question the agent asked, when it waits for the person.
    pub question: Option<NoteRef>,
    /// Failed sends so far.
    pub attempts: u32,
    pub updated_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(optional_fields))]
pub struct DeliveriesParams {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pad: Option<String>,
    /// One note's deliveries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct DeliveriesResult {
    pub deliveries: Vec<Delivery>,
}

/// What a reply in an Agent Zero chat's (or a delegated task's) thread asks
/// of it, as its `meta.control`: the plugin pauses, resumes or halts that
/// chat (or subordinate) at its next step. The UI's `Control` is generated
/// from this; the plugin's `CONTROLS` is checked against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Control {
    Pause,
    Resume,
    Stop,
}

impl Control {
    pub fn as_str(self) -> &'static str {
        match self {
            Control::Pause => "pause",
            Control::Resume => "resume",
            Control::Stop => "stop",
        }
    }

    /// The reply that asks it of the chat or task whose note `parent` is,
    /// on `pad`: its content the word, its `meta.control` the value.
    pub fn reply(self, pad: String, parent: String) -> crate::protocol::AddParams {
        let mut meta = serde_json::Map::new();
        meta.insert("control".into(), serde_json::json!(self));
        crate::protocol::AddParams {
            pad,
            reply_to: Some(parent),
            content: self.as_str().into(),
            meta: Some(meta),
            ..Default::default()
        }
    }
}

//! `pad mcp`: an MCP server over stdio that forwards to the engine.
//!
//! Stateless and quick, because some MCP clients (Agent Zero among them)
//! spawn a fresh `pad mcp` for every tool call: it keeps nothing in memory,
//! never loads the embedding model, and opens one socket connection per tool
//! call. Tool names follow what agents know from tool-based scratchpads.
//! Errors come back as tool errors (`isError`) whose text says how to fix the
//! call — the engine's own instructive messages.

mod ask;
mod http;
mod notes;
mod rpc_http;
mod schema;
mod sse;
mod text;
mod work;

pub use http::{http_bind_allowed, http_token, serve_http, TOKEN_FILE};

use std::path::PathBuf;

use rmcp::handler::server::tool::{InputResponses, RequestState, ToolCallContext};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use crate::client::{Client, ClientError};
use crate::model::count;
use crate::protocol::method::{self as m, Keyed, Method};
use crate::protocol::{AddParams, InboxParams, PadListParams};
use notes::{
    AddNote, DeleteNote, ListNotes, PadOnly, ReadPad, ScratchNote, SearchNotes, UpdateNote,
};
use text::{fail, inbox_line, ok};

/// Where the engine is and who is writing.
#[derive(Clone, Debug)]
pub struct McpConfig {
    pub socket: PathBuf,
    pub pad: String,
    pub author: String,
    /// Start `pad serve` in the background when no engine answers.
    pub autostart: bool,
    /// Which tools to offer.
    pub tools: ToolSet,
    /// What each HTTP client may hold at once (`tcp::Budget`).
    pub budget: std::sync::Arc<crate::tcp::Budget>,
}

/// Which tools a server offers: all, or the core for clients that paste
/// every schema into every prompt (`--tools core`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ToolSet {
    #[default]
    All,
    Core,
}

/// The core set: write, find, read, revise, ask.
pub const CORE_TOOLS: &[&str] = &[
    "add_note",
    "search_notes",
    "list_notes",
    "update_note",
    "ask_person",
];

#[derive(Clone)]
pub struct PadTools {
    config: McpConfig,
    /// Who the session speaks for, when fixed at its start (the SSE
    /// transport: the token of the request that opened the stream).
    caller: Option<Caller>,
    #[allow(dead_code)] // read by the tool_handler macro
    tool_router: ToolRouter<Self>,
}

impl PadTools {
    pub fn new(config: McpConfig) -> Self {
        let mut tool_router = Self::tool_router();
        if config.tools == ToolSet::Core {
            tool_router
                .map
                .retain(|name, _| CORE_TOOLS.contains(&name.as_ref()));
        }
        for route in tool_router.map.values_mut() {
            schema::strict(
                std::sync::Arc::make_mut(&mut route.attr.input_schema),
                &config.pad,
            );
        }
        PadTools {
            config,
            caller: None,
            tool_router,
        }
    }

    /// The same tools, speaking for `caller` (see `Caller`).
    pub fn speaking_for(mut self, caller: Option<Caller>) -> Self {
        self.caller = caller;
        self
    }

    fn pad(&self, pad: Option<String>) -> String {
        pad.unwrap_or_else(|| self.config.pad.clone())
    }

    /// Who writes: the caller's token name over HTTP, else the server's author.
    fn author(&self) -> String {
        caller().map_or_else(|| self.config.author.clone(), |c| c.name)
    }

    /// A tool call's link to the engine.
    fn link(&self) -> Link<'_> {
        Link {
            config: &self.config,
            client: None,
            _held: None,
            acts_as: None,
            token: false,
        }
    }
}

/// Who an HTTP request speaks for when its bearer is an engine access token
/// (`pad token create --name …`) rather than the server's own token: the
/// token goes to the engine (its pads, its revocation) and its name is the
/// author of what the holder writes, so each agent has its own inbox.
#[derive(Clone, Debug)]
pub struct Caller {
    pub token: String,
    pub name: String,
}

tokio::task_local! {
    /// The caller of the tool call running on this task, if not the server.
    static CALLER: Option<Caller>;
}

fn caller() -> Option<Caller> {
    CALLER.try_with(Clone::clone).ok().flatten()
}

/// One tool call's connection to the engine, opened (with `hello`) on first
/// use and shared by every request the call makes, the inbox included.
struct Link<'a> {
    config: &'a McpConfig,
    client: Option<Client>,
    /// Its place in the caller's budget while the connection is open.
    _held: Option<crate::tcp::InFlight>,
    /// Who the engine says the connection acts as (a token's name for a
    /// token, whatever author the server was given).
    acts_as: Option<String>,
    /// It said hello with an access token (`PAD_TOKEN`, or the HTTP
    /// caller's): it writes under that token's name alone.
    token: bool,
}

impl Link<'_> {
    /// Calls the method `M` with its own params type (`protocol::method`):
    /// a field it does not take, or one missing, does not compile. Every
    /// call a tool makes goes through here.
    async fn send<M: Method>(&mut self, params: M::Params) -> Result<Value, String> {
        let params =
            serde_json::to_value(&params).map_err(|e| format!("{} params: {e}", M::NAME))?;
        let client = self.connect().await?;
        client.call(M::NAME, params).await.map_err(describe)
    }

    /// Sends the write `M` with a fresh idempotency key, and again with the
    /// same key while the engine answers `-32005` or `-32006`
    /// (`Client::call_keyed`): an agent's note is stored once.
    async fn write<M: Keyed>(&mut self, mut params: M::Params) -> Result<Value, String> {
        M::key(&mut params).get_or_insert_with(crate::client::fresh_key);
        let params =
            serde_json::to_value(&params).map_err(|e| format!("{} params: {e}", M::NAME))?;
        let client = self.connect().await?;
        client.call_keyed(M::NAME, &params).await.map_err(describe)
    }

    /// Whether what this call writes may be the person's (no access token
    /// speaks through it).
    async fn speaks_for_person(&mut self) -> Result<bool, String> {
        self.connect().await?;
        Ok(!self.token)
    }

    /// Who the engine says this call acts as: a task's holder is named so.
    async fn acts_as(&mut self) -> Result<String, String> {
        self.connect().await?;
        Ok(self
            .acts_as
            .clone()
            .unwrap_or_else(|| self.config.author.clone()))
    }

    async fn connect(&mut self) -> Result<&mut Client, String> {
        if self.client.is_none() {
            let config = self.config;
            let who = caller().map_or_else(|| config.author.clone(), |c| c.name);
            self._held = Some(config.budget.take(&who)?);
            let mut c = crate::autostart::connect(&config.socket, config.autostart)
                    .await
                    .map_err(|e| {
                        format!(
                            "the Scratchpad engine is not reachable at {} ({e}); start it with `pad serve`",
                            config.socket.display()
                        )
                    })?;
            let hello = match caller() {
                Some(who) => {
                    c.greet_as(Some(&who.name), "pad-mcp", Some(&who.token))
                        .await
                }
                None => c.greet(Some(&config.author), "pad-mcp").await,
            }
            .map_err(describe)?;
            self.acts_as = hello["author"].as_str().map(str::to_owned);
            self.token = hello["token"].is_string();
            self.client = Some(c);
        }
        Ok(self.client.as_mut().expect("connected above"))
    }
}

fn describe(e: ClientError) -> String {
    match e {
        ClientError::Rpc(r) => schema::in_tool_terms(&r.message),
        other => other.to_string(),
    }
}

#[tool_router]
impl PadTools {
    #[tool(
        title = "Add a note",
        description = "Save a note to the shared scratch-pad, where the person and other agents can find it. Use it for findings, plans, results and open questions worth keeping; tag it so it can be found (add the tag needs_eyes when a person should look); set reply_to to answer someone's note. To ask the person and wait for the answer, use ask_person instead. Limits: 4,000 characters, 10 tags. Returns the note's id (for update_note) and the pad's note count. Any tool result may end with an Inbox line: notes flagged needs_eyes by others, and replies to your notes, since your last call.",
        annotations(
            title = "Add a note",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn add_note(&self, Parameters(p): Parameters<AddNote>) -> CallToolResult {
        let mut link = self.link();
        let result = self.add_note_body(&mut link, p).await;
        self.with_inbox(&mut link, result).await
    }

    #[tool(
        title = "Jot a note",
        description = "Quickest way to jot something down: content only, no tags, to the default pad. Use add_note when the note deserves tags or a kind. Limit: 4,000 characters. Returns the note's id.",
        annotations(
            title = "Jot a note",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn scratch_note(&self, Parameters(p): Parameters<ScratchNote>) -> CallToolResult {
        let mut link = self.link();
        let result = self.scratch_note_body(&mut link, p).await;
        self.with_inbox(&mut link, result).await
    }

    #[tool(
        title = "Search notes",
        description = "Search the scratch-pad by words and by meaning (hybrid), so paraphrases are found too. Narrow with tags (all must match) or a pad; mode text or semantic picks one side. Returns hits best first with ids, authors and content; use update_note on an id to follow up.",
        annotations(
            title = "Search notes",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn search_notes(&self, Parameters(p): Parameters<SearchNotes>) -> CallToolResult {
        let mut link = self.link();
        let result = self.search_notes_body(&mut link, p).await;
        self.with_inbox(&mut link, result).await
    }

    #[tool(
        title = "List notes",
        description = "List the newest notes of a pad, optionally only those with all the given tags or of one kind. Returns each note's id, kind, author, tags and content, and whether there are more.",
        annotations(
            title = "List notes",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_notes(&self, Parameters(p): Parameters<ListNotes>) -> CallToolResult {
        let mut link = self.link();
        let result = self.list_notes_body(&mut link, p).await;
        self.with_inbox(&mut link, result).await
    }

    #[tool(
        title = "Change a note",
        description = "Change a note: new content, new tags (replacing the old) or, for tasks, a status (todo, doing, done, failed, blocked). Give at least one. Returns the note as it now is.",
        annotations(
            title = "Change a note",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn update_note(&self, Parameters(p): Parameters<UpdateNote>) -> CallToolResult {
        let mut link = self.link();
        let result = self.update_note_body(&mut link, p).await;
        self.with_inbox(&mut link, result).await
    }

    #[tool(
        title = "Delete a note",
        description = "Delete a note by id. It goes to the pad's trash, where the person can restore it (for 30 days by default). Returns the deleted id.",
        annotations(
            title = "Delete a note",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn delete_note(&self, Parameters(p): Parameters<DeleteNote>) -> CallToolResult {
        let mut link = self.link();
        let result = self.delete_note_body(&mut link, p).await;
        self.with_inbox(&mut link, result).await
    }

    #[tool(
        title = "List tags",
        description = "The tags in use in a pad, most used first, with how many notes carry each. Use them to tag consistently and to filter searches.",
        annotations(
            title = "List tags",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_tags(&self, Parameters(p): Parameters<PadOnly>) -> CallToolResult {
        let mut link = self.link();
        let result = self.list_tags_body(&mut link, p).await;
        self.with_inbox(&mut link, result).await
    }

    #[tool(
        title = "Read a pad",
        description = "A pad as markdown, ready to read into context: notes grouped as plan, tasks, working notes, results, insights and questions, newest first within each, with kind, author, time, id, tags and status. Bounded by max_chars (default 12,000 characters, about 3,000 tokens): pinned and important notes and open questions go in first, then the newest; a closing line says how many notes were left out and how to get more.",
        annotations(
            title = "Read a pad",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn read_pad(&self, Parameters(p): Parameters<ReadPad>) -> CallToolResult {
        let mut link = self.link();
        let result = self.read_pad_body(&mut link, p).await;
        self.with_inbox(&mut link, result).await
    }

    #[tool(
        title = "Claim a task",
        description = "Take the next task that is ready in a pad's plan (its dependencies done), so that no other agent works on it. Returns the task with its resume note: if another agent started it and stopped, continue from there. Hold it by calling update_task with your progress before the lease runs out; finish with update_task status done (or failed). Returns 'no task is ready' with what is running, blocked and done when there is nothing to take.",
        annotations(
            title = "Claim a task",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn claim_task(&self, Parameters(p): Parameters<work::ClaimTask>) -> CallToolResult {
        let mut link = self.link();
        let result = self.claim_task_body(&mut link, p).await;
        self.with_inbox(&mut link, result).await
    }

    #[tool(
        title = "Report on a task",
        description = "Report on a task you hold: progress in resume (this also renews your lease), status done when finished, status failed with an error when it cannot be done (retry true puts it back in the queue). Keep resume current: if you stop, the next agent continues from it. Fails if the task was handed to another agent after your lease ran out: then stop working on it.",
        annotations(
            title = "Report on a task",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn update_task(&self, Parameters(p): Parameters<work::UpdateTask>) -> CallToolResult {
        let mut link = self.link();
        let result = self.update_task_body(&mut link, p).await;
        self.with_inbox(&mut link, result).await
    }

    #[tool(
        title = "Read the plan",
        description = "The plan of a pad: its goal notes and its tasks in dependency order, each ready, running (with who holds it), blocked (and on what), done or failed, with resume notes. Read it before planning, so work already done or under way is not redone.",
        annotations(
            title = "Read the plan",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn plan(&self, Parameters(p): Parameters<work::PlanOf>) -> CallToolResult {
        let mut link = self.link();
        let result = self.plan_body(&mut link, p).await;
        self.with_inbox(&mut link, result).await
    }

    #[tool(
        title = "Ask the person",
        description = "Ask the person a question and wait for the answer. Ask before anything destructive or irreversible (deleting data, dropping a database, force-pushing, spending money, sending messages on their behalf) and when you are blocked on a decision only they can make; offer choices such as [\"approve\", \"deny\"]. The person sees a desktop notification and answers with a click. Returns the answer and who gave it, or, if nobody answered within wait_seconds (default 45, at most 110; progress notifications go to clients that ask for them), the question's id: the answer then arrives later in your Inbox line. Do not go ahead until you have the answer.",
        annotations(
            title = "Ask the person",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn ask_person(
        &self,
        Parameters(p): Parameters<ask::AskPerson>,
        ctx: RequestContext<RoleServer>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> CallToolResponse {
        let mut link = self.link();
        let (result, answer) = match self
            .ask_person_body(&mut link, p, ctx, state, responses)
            .await
        {
            ask::Asked::Done(result, answer) => (result, answer),
            // A round trip through the client (protocol 2026-07-28): the
            // inbox line comes with the final result.
            ask::Asked::InClient(input) => return CallToolResponse::InputRequired(input),
        };
        CallToolResponse::Complete(
            self.with_inbox_except(&mut link, result, answer.as_deref())
                .await,
        )
    }

    #[tool(
        title = "Share a note",
        description = "Copy a note (an insight, a gotcha, a result) to other pads so the agents working there learn it too. Each copy records where it came from. Returns the new ids.",
        annotations(
            title = "Share a note",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn share_note(&self, Parameters(p): Parameters<work::ShareNote>) -> CallToolResult {
        let mut link = self.link();
        let result = self.share_note_body(&mut link, p).await;
        self.with_inbox(&mut link, result).await
    }
}

impl PadTools {
    /// Appends the author's inbox (new `needs_eyes` entries and replies by
    /// others since its last call) to a tool's result. Read once per tool
    /// call, after the tool's own work, so nothing is shown twice or lost.
    async fn with_inbox(&self, link: &mut Link<'_>, result: CallToolResult) -> CallToolResult {
        self.with_inbox_except(link, result, None).await
    }

    /// `with_inbox`, leaving out a reply the result already reports.
    async fn with_inbox_except(
        &self,
        link: &mut Link<'_>,
        mut result: CallToolResult,
        shown: Option<&str>,
    ) -> CallToolResult {
        if let Ok(mut r) = link.send::<m::Inbox>(InboxParams::default()).await {
            if let (Some(id), Some(replies)) = (shown, r["replies"].as_array_mut()) {
                replies.retain(|e| e["id"] != id);
            }
            if let Some(line) = inbox_line(&r) {
                result.content.push(ContentBlock::text(line));
            }
        }
        result
    }

    async fn saved(&self, link: &mut Link<'_>, mut add: AddParams) -> CallToolResult {
        let pad = add.pad.clone();
        // An agent told it repeats a note can update that one instead.
        add.check_duplicates = true;
        let (entry, looks_like) = match link.write::<m::EntryAdd>(add).await {
            Ok(r) => (r["entry"].clone(), r["looks_like"].clone()),
            Err(e) => return fail(e),
        };
        // The count is a courtesy: the note is saved even if this fails.
        let count = link
            .send::<m::PadList>(PadListParams::default())
            .await
            .ok()
            .and_then(|r| {
                r["pads"]
                    .as_array()?
                    .iter()
                    .find(|p| p["name"] == pad.as_str())
                    .and_then(|p| p["entries"].as_i64())
            })
            .map(|n| format!(" The pad now holds {}.", count(n, "note", "notes")))
            .unwrap_or_default();
        let repeat = match looks_like["id"].as_str() {
            Some(id) => format!(
                " It looks like note {id} \"{}\" ({}): if this one replaces it (the fact changed), update_note {} with supersedes \"{id}\" (the older note is kept, and searches show this one); if it is the same, update_note {id} instead and delete_note this one.",
                looks_like["preview"].as_str().unwrap_or(""),
                match looks_like["same"].as_str() {
                    Some("text") => "the same text",
                    Some("words") => "nearly the same words",
                    _ => "nearly the same meaning",
                },
                entry["id"].as_str().unwrap_or("")
            ),
            None => String::new(),
        };
        ok(format!(
            "Saved note {} to pad '{}'.{count}{repeat}",
            entry["id"].as_str().unwrap_or(""),
            entry["pad"].as_str().unwrap_or("")
        ))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for PadTools {
    /// Checks the arguments against the tool's schema first, so a slip gets
    /// a tool error the model can act on (see `schema::check`).
    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(route) = self.tool_router.map.get(request.name.as_ref()) else {
            let mut known: Vec<&str> = self.tool_router.map.keys().map(|k| k.as_ref()).collect();
            known.sort_unstable();
            let hint = schema::closest(&request.name, &known)
                .map(|c| format!(" Did you mean '{c}'?"))
                .unwrap_or_default();
            return Ok(CallToolResponse::Complete(fail(format!(
                "There is no tool '{}'.{hint} The tools are: {}.",
                request.name,
                known.join(", ")
            ))));
        };
        let mut args = request.arguments.take().unwrap_or_default();
        let ignored = match schema::check(&route.attr, &mut args) {
            Ok(ignored) => schema::ignored_line(&request.name, &ignored),
            Err(e) => return Ok(CallToolResponse::Complete(fail(e))),
        };
        request.arguments = Some(args);
        let name = request.name.clone();
        let who = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Caller>())
            .cloned()
            .or_else(|| self.caller.clone());
        let call = self
            .tool_router
            .call(ToolCallContext::new(self, request, context));
        let result = match CALLER.scope(who, call).await {
            // What the schema check could not see (an id that is not a
            // string of the right shape, say): still the tool's words.
            Err(e) if e.code == rmcp::model::ErrorCode::INVALID_PARAMS => {
                Ok(CallToolResponse::Complete(fail(format!(
                    "{name}: {}. Check the arguments against the tool's description and call it again.",
                    e.message.trim_start_matches("failed to deserialize parameters: ")
                ))))
            }
            other => other,
        };
        match (result, ignored) {
            (Ok(CallToolResponse::Complete(mut r)), Some(line)) => {
                r.content.push(ContentBlock::text(line));
                Ok(CallToolResponse::Complete(r))
            }
            (other, _) => other,
        }
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("scratchpad", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "A scratch-pad shared by a person and their agents. Save findings, plans, results and \
                 questions with add_note (scratch_note for a quick jot); look for earlier work with \
                 search_notes before starting; read a whole pad into context with read_pad. For planned \
                 work: plan shows the tasks in order, claim_task takes the next ready one, update_task \
                 reports progress and completion, share_note passes a learning to other pads. Before \
                 anything destructive or irreversible, ask_person and wait for the answer.",
            )
    }
}

/// Serves MCP on stdin/stdout until the client closes it.
pub async fn serve(config: McpConfig) -> anyhow::Result<()> {
    let server = PadTools::new(config)
        .serve(rmcp::transport::stdio())
        .await?;
    server.waiting().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::text::not_embedded;
    use super::PadTools;
    use crate::model::{Kind, Status};
    use crate::protocol::SearchMode;
    use serde_json::{json, Value};

    /// The words a tool takes for `kind`, `status` and `mode` are the
    /// engine's types' own, in the schema a client sees: a word added to
    /// the type reaches the tools, and each parses as the type.
    #[test]
    fn the_tools_words_are_the_methods_types() {
        let router = PadTools::tool_router();
        let words = |tool: &str, arg: &str| -> Vec<String> {
            let route = &router.map[tool];
            let schema = Value::Object((*route.attr.input_schema).clone());
            serde_json::from_value(schema["properties"][arg]["enum"].clone())
                .unwrap_or_else(|e| panic!("{tool}.{arg} has no word list: {e}"))
        };
        assert_eq!(words("add_note", "kind"), Kind::ALL);
        assert_eq!(words("list_notes", "kind"), Kind::ALL);
        assert_eq!(words("update_note", "status"), Status::ALL);
        assert_eq!(words("update_task", "status"), Status::ALL);
        assert_eq!(words("search_notes", "mode"), SearchMode::ALL);
        for w in SearchMode::ALL {
            let mode: SearchMode = serde_json::from_value(json!(w)).unwrap();
            assert_eq!(serde_json::to_value(mode).unwrap(), json!(w));
        }
    }

    #[test]
    fn search_results_say_what_meaning_search_could_not_see_yet() {
        assert_eq!(not_embedded(&json!({"hits": []})), "");
        let text = not_embedded(&json!({"hits": [], "not_embedded": 250}));
        assert!(
            text.contains("250 notes") && text.contains("mode \"text\""),
            "{text}"
        );
    }
}

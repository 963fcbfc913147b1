//! The `pad` command line: a thin client of the socket, plus `serve`.
//!
//! Each command is a small function making one or two requests, each a
//! method of the protocol as its type (`protocol::method`: its params and
//! its answer), and showing the typed answer (`Show`): for a person by
//! default and JSON with `--json`. Exit codes let scripts branch:
//! 0 ok · 1 other failure · 2 bad input or usage · 3 not found · 4 conflict ·
//! 5 forbidden · 6 too large · 7 engine unavailable (not running, or busy).

pub mod agent_zero;
mod agents;
mod args;
mod confined;
mod explain;
mod history;
mod notes;
mod plugin_zip;
mod render;
mod serve;
mod threads;
mod work;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::json;

use crate::client::{Client, ClientError};
use crate::error::code;
use args::{content_arg, duration_secs};

#[derive(Parser, Debug)]
#[command(
    name = "pad",
    version,
    about = "A shared scratch-pad for you and your AI agents."
)]
pub struct Cli {
    /// Print results as JSON (for scripts).
    #[arg(long, global = true)]
    json: bool,
    /// The engine's socket [default: $XDG_RUNTIME_DIR/scratchpad/pad.sock].
    #[arg(long, global = true, env = "PAD_SOCKET", hide_env_values = true)]
    socket: Option<PathBuf>,
    /// Never start an engine: fail when none is running (by default the CLI
    /// and `pad mcp` start `pad serve` in the background).
    #[arg(long, global = true, env = "PAD_NO_AUTOSTART", value_parser = clap::builder::FalseyValueParser::new())]
    no_autostart: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the engine in the foreground (headless).
    Serve(serve::ServeArgs),
    /// Serve MCP over stdin/stdout for an agent, forwarding to the engine.
    Mcp(McpArgs),
    /// Write a note (content as an argument, or from stdin).
    Note(NoteArgs),
    /// Show one entry.
    Show { id: String },
    /// List entries, newest first.
    Ls(LsArgs),
    /// Search entries.
    Search(SearchArgs),
    /// Change an entry.
    Edit(EditArgs),
    /// Delete entries.
    Rm {
        #[arg(required = true)]
        ids: Vec<String>,
    },
    /// Tags in use, most used first.
    Tags {
        #[arg(short, long)]
        pad: Option<String>,
    },
    /// List pads.
    Pads {
        /// Include archived (expired) pads.
        #[arg(short, long)]
        all: bool,
    },
    /// Set a pad's expiry and rolling window; also restores an archived pad.
    Configure(ConfigureArgs),
    /// Delete every entry of a pad.
    Clear {
        pad: String,
        /// Do not ask for confirmation.
        #[arg(short, long)]
        yes: bool,
        /// Keep pinned entries.
        #[arg(long)]
        keep_pinned: bool,
    },
    /// Export a pad as markdown or JSON.
    Export {
        pad: String,
        #[arg(short, long, default_value = "markdown", value_parser = ["markdown", "json"])]
        format: String,
        /// Markdown at most this many characters: pinned and important
        /// entries first, then the newest; says what it left out.
        #[arg(long)]
        budget: Option<usize>,
        /// Also notes a newer note supersedes (marked).
        #[arg(long)]
        include_superseded: bool,
    },
    /// Print events as they happen (Ctrl-C to stop).
    Watch {
        #[arg(short, long = "pad")]
        pads: Vec<String>,
        #[arg(short, long = "tag")]
        tags: Vec<String>,
        #[arg(short, long = "kind")]
        kinds: Vec<String>,
    },
    /// Engine statistics.
    Stats,
    /// Embed every entry again and rebuild the vector index (semantic search).
    Reindex,
    /// Tasks: add, claim, heartbeat, done, fail.
    #[command(subcommand)]
    Task(work::TaskCmd),
    /// A pad's tasks in dependency order, with what is ready, running, blocked, done.
    Plan {
        #[arg(short, long, env = "PAD_PAD", default_value = "inbox")]
        pad: String,
    },
    /// Write a note that reminds its author when due.
    Remind(work::RemindArgs),
    /// Copy an entry to other pads, saying where it came from.
    Share {
        id: String,
        /// A pad to copy it to (repeat).
        #[arg(long = "to", required = true)]
        to: Vec<String>,
    },
    /// Per author and task: entries, tasks done and failed, retries,
    /// durations, tokens. With --by, --since or --until: every change
    /// (created, edited, deleted, restored) in that range instead.
    Report {
        #[arg(short, long)]
        pad: Option<String>,
        /// Only this author's (or token's) changes.
        #[arg(long)]
        by: Option<String>,
        /// From this time: RFC 3339, or a duration ago (2h, 3d).
        #[arg(long)]
        since: Option<String>,
        /// Up to this time: RFC 3339, or a duration ago.
        #[arg(long)]
        until: Option<String>,
    },
    /// An entry's earlier versions as diffs: who changed what, when.
    History { id: String },
    /// Deleted entries that can be restored, newest deletion first.
    Trash(history::TrashArgs),
    /// Bring back a deleted entry, an earlier version, or everything one
    /// delete, clear or edit did (--change).
    Restore(history::RestoreArgs),
    /// Erase deleted entries' kept versions for good (owner only).
    Purge(history::PurgeArgs),
    /// Access tokens for agents: create, list, revoke.
    #[command(subcommand)]
    Token(work::TokenCmd),
    /// Ask the person a question and wait for the answer (printed; exit 8
    /// when nobody answered in time).
    Ask(threads::AskArgs),
    /// Answer an entry (the reply joins its thread and its author's inbox).
    Reply(threads::ReplyArgs),
    /// An entry and every reply under it.
    Thread { id: String },
    /// What is new for an author: needs_eyes notes by others, replies to its
    /// entries (a late answer to `pad ask` too), reminders come due.
    Inbox(threads::InboxArgs),
    /// Agents the person can reach over A2A: add, ls (with who is working
    /// on what), rm.
    #[command(subcommand)]
    Agent(agents::AgentCmd),
    /// Agent Zero: install the plugin (`install [DIR]`), and stop, pause or
    /// resume a chat it runs.
    #[command(subcommand, name = "agent-zero")]
    AgentZero(agent_zero::AgentZeroCmd),
    /// Hand a note to an agent: stored in the pad, sent to it over A2A
    /// when registered (else it waits in its inbox); replies land in the thread.
    Send(agents::SendArgs),
}

#[derive(Args, Debug)]
struct McpArgs {
    /// The pad tools write to and read from when the agent names none.
    #[arg(short, long, env = "PAD_PAD", default_value = "inbox")]
    pad: String,
    /// The author of the agent's notes.
    #[arg(long, env = "PAD_AUTHOR", default_value = "agent")]
    author: String,
    /// Which tools to offer: all, or core (add_note, search_notes,
    /// list_notes, update_note, ask_person) for clients that pay for every
    /// tool's schema in every prompt.
    #[arg(long, env = "PAD_TOOLS", value_enum, default_value_t)]
    tools: crate::mcp::ToolSet,
}

#[derive(Args, Debug)]
struct NoteArgs {
    /// The note; omit it (or give '-') to read from stdin.
    content: Option<String>,
    #[arg(short, long, env = "PAD_PAD", default_value = "inbox")]
    pad: String,
    #[arg(short, long = "tag")]
    tags: Vec<String>,
    #[arg(short, long, default_value = "note")]
    kind: String,
    #[arg(long, env = "PAD_AUTHOR", default_value = "user")]
    author: String,
    /// Pin it: pinned entries never expire.
    #[arg(long)]
    pin: bool,
    /// The id of an older note this one replaces: kept, but lists and
    /// searches show this one instead.
    #[arg(long, value_name = "ID")]
    supersedes: Option<String>,
    /// The write's idempotency key (default: a fresh one). Give the key a
    /// failed run printed to send that write again: it is stored once.
    #[arg(long, env = "PAD_IDEMPOTENCY_KEY", value_name = "KEY")]
    idempotency_key: Option<String>,
}

#[derive(Args, Debug)]
struct LsArgs {
    #[arg(short, long)]
    pad: Option<String>,
    /// Only entries with this tag (repeat: all must match).
    #[arg(short, long = "tag")]
    tags: Vec<String>,
    #[arg(long)]
    author: Option<String>,
    #[arg(short, long)]
    kind: Option<String>,
    #[arg(long)]
    status: Option<String>,
    /// Insights of this category: pattern, gotcha, discovery, learning.
    #[arg(long)]
    category: Option<String>,
    /// Only entries with at least this confidence (0-1).
    #[arg(long)]
    min_confidence: Option<f64>,
    /// Only entries since this long ago (30m, 2h, 7d) or this RFC 3339 time.
    #[arg(long)]
    since: Option<String>,
    /// How many entries.
    #[arg(short = 'n', long, default_value_t = 20)]
    limit: u32,
    /// Every matching entry, page after page.
    #[arg(short, long)]
    all: bool,
    /// Also notes a newer note supersedes.
    #[arg(long)]
    include_superseded: bool,
}

#[derive(Args, Debug)]
struct SearchArgs {
    query: String,
    #[arg(short, long)]
    pad: Option<String>,
    #[arg(short, long = "tag")]
    tags: Vec<String>,
    #[arg(short, long)]
    kind: Option<String>,
    #[arg(long)]
    author: Option<String>,
    #[arg(long)]
    category: Option<String>,
    #[arg(long)]
    min_confidence: Option<f64>,
    #[arg(short = 'n', long, default_value_t = 10)]
    limit: u32,
    #[arg(short, long, default_value = "hybrid", value_parser = ["hybrid", "text", "semantic"])]
    mode: String,
    /// Also notes a newer note supersedes.
    #[arg(long)]
    include_superseded: bool,
    /// Say why each hit ranked where it did: the words and their weights,
    /// each ranking's place and score, the filter, what was dropped.
    #[arg(long)]
    explain: bool,
}

#[derive(Args, Debug)]
struct EditArgs {
    id: String,
    /// New content; '-' reads it from stdin.
    content: Option<String>,
    /// Replace the tags with these (repeat).
    #[arg(short, long = "tag")]
    tags: Vec<String>,
    /// Remove every tag.
    #[arg(long, conflicts_with = "tags")]
    no_tags: bool,
    #[arg(short, long)]
    kind: Option<String>,
    #[arg(long)]
    status: Option<String>,
    #[arg(long, conflicts_with = "unpin")]
    pin: bool,
    #[arg(long)]
    unpin: bool,
    /// Only if the entry is still at this version.
    #[arg(long)]
    if_version: Option<i64>,
    /// The older note this one replaces ('none': it replaces none).
    #[arg(long, value_name = "ID")]
    supersedes: Option<String>,
}

#[derive(Args, Debug)]
struct ConfigureArgs {
    pad: String,
    /// Idle time before the pad expires: 90s, 30m, 2h, 7d, or 'never'.
    #[arg(long)]
    ttl: Option<String>,
    /// Keep only the newest N entries (pinned ones stay), or 'none'.
    #[arg(long)]
    max_entries: Option<String>,
}

/// The engine's methods and params as the commands and flags that send
/// them, for error texts: a person at a terminal knows `pad show`, not
/// `entry.get`.
const CLI_TERMS: &[(&str, &str)] = &[
    ("(entry.get)", "(pad show <id>)"),
    ("(entry.list)", "(pad ls)"),
    (
        "(entry.update can change its kind)",
        "(pad edit <id> --kind task changes its kind)",
    ),
    ("(task.claim)", "(pad task claim)"),
    ("task.heartbeat", "pad task heartbeat"),
    ("task.* methods", "pad task commands"),
    ("retry with if_version", "retry with --if-version"),
    ("if_version", "--if-version"),
    ("lease_seconds", "--lease"),
    ("entry.add:", "pad note:"),
    ("entry.update:", "pad edit:"),
    ("entry.list:", "pad ls:"),
    ("search:", "pad search:"),
];

pub fn main() -> ExitCode {
    // `pad ls | head -1`: once the reader is gone, the rest of the output
    // has nowhere to go, and that is success — not a panic (exit 101).
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default_hook(info);
    }));
    let cli = Cli::parse();
    let cli = match cli.command {
        Command::Serve(args) => return serve::main(args, cli.socket),
        Command::Mcp(args) => return mcp_main(args, cli.socket, !cli.no_autostart),
        Command::AgentZero(cmd) if cmd.offline() => return agent_zero::offline_main(cmd),
        _ => cli,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime starts");
    let json = cli.json;
    match rt.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let exit = exit_code(&e);
            if json {
                let err = match e.downcast_ref::<ClientError>() {
                    Some(ClientError::Rpc(r)) => {
                        json!({"code": r.code, "message": r.message, "data": r.data})
                    }
                    _ => json!({"message": chain(&e)}),
                };
                eprintln!("{}", json!({ "error": err }));
            } else {
                let said = crate::error::reword(&chain(&e), CLI_TERMS);
                eprintln!("pad: {}", render::safe_text(&said));
            }
            ExitCode::from(exit)
        }
    }
}

/// An error and its causes, "outer: inner", leaving out a cause whose text
/// the message already says (a `ClientError::Io` shows its source).
pub(crate) fn chain(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text = format!("{text}: {cause}");
        }
    }
    text
}

fn mcp_main(args: McpArgs, socket: Option<PathBuf>, autostart: bool) -> ExitCode {
    let config = crate::mcp::McpConfig {
        socket: socket.unwrap_or_else(crate::paths::client_socket_path),
        pad: args.pad,
        author: args.author,
        autostart,
        tools: args.tools,
        budget: Default::default(),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime starts");
    match rt.block_on(crate::mcp::serve(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pad mcp: {}", chain(&e));
            ExitCode::from(1)
        }
    }
}

fn exit_code(e: &anyhow::Error) -> u8 {
    match e.downcast_ref::<ClientError>() {
        Some(ClientError::Io(_)) => 7,
        Some(ClientError::Rpc(r)) => match r.code {
            code::NOT_FOUND => 3,
            code::CONFLICT => 4,
            code::FORBIDDEN => 5,
            code::TOO_LARGE => 6,
            code::UNAVAILABLE => 7,
            code::OUTCOME_UNKNOWN => 9,
            code::PARSE | code::INVALID_REQUEST | code::METHOD_NOT_FOUND | code::INVALID_PARAMS => {
                2
            }
            _ => 1,
        },
        Some(ClientError::Protocol(_)) => 1,
        None if e.downcast_ref::<UsageError>().is_some() => 2,
        None if e.downcast_ref::<work::NothingReady>().is_some() => 3,
        None if e.downcast_ref::<threads::Unanswered>().is_some() => 8,
        None => 1,
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct UsageError(String);

/// Prints a result: as JSON with `--json`, else with the given renderer.
/// How answers are shown: as JSON (`--json`) or for a person.
#[derive(Clone, Copy)]
pub(crate) struct Show {
    json: bool,
}

impl Show {
    /// Prints an answer: as JSON, or for a person by `human`, every string
    /// in it made terminal-safe first (`render::safe`).
    fn print<T: Serialize + DeserializeOwned>(
        self,
        answer: &T,
        human: impl FnOnce(&T),
    ) -> anyhow::Result<()> {
        if self.json {
            println!("{}", serde_json::to_string_pretty(answer)?);
        } else {
            human(&render::safe(answer)?);
        }
        Ok(())
    }
}

async fn connect(socket: Option<PathBuf>, autostart: bool) -> anyhow::Result<Client> {
    let path = socket.unwrap_or_else(crate::paths::client_socket_path);
    crate::autostart::connect(&path, autostart).await.map_err(|e| {
        let hint = match e.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
                if !autostart =>
            {
                format!(
                    "no engine is running at {}; start one with `pad serve` (or drop --no-autostart)",
                    path.display()
                )
            }
            _ => format!("cannot connect to {}: {e}", path.display()),
        };
        anyhow::Error::new(ClientError::Io(std::io::Error::new(e.kind(), hint)))
    })
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let show = Show { json: cli.json };
    let mut c = connect(cli.socket, !cli.no_autostart).await?;
    // Who we are (the author edits and deletions are recorded as made by):
    // with a token when the engine requires one.
    let me = std::env::var("PAD_AUTHOR")
        .ok()
        .filter(|a| !a.is_empty())
        .unwrap_or_else(|| "user".to_owned());
    c.greet(Some(&me), "pad-cli").await?;
    let c = &mut c;
    match cli.command {
        Command::Serve(_)
        | Command::Mcp(_)
        | Command::AgentZero(agent_zero::AgentZeroCmd::Install { .. })
        | Command::AgentZero(agent_zero::AgentZeroCmd::Zip { .. }) => {
            unreachable!("handled before connecting")
        }
        Command::Note(a) => notes::note(a, c, show).await,
        Command::Show { id } => notes::show_entry(id, c, show).await,
        Command::Ls(a) => notes::ls(a, c, show).await,
        Command::Search(a) => notes::search(a, c, show).await,
        Command::Edit(a) => notes::edit(a, c, show).await,
        Command::Rm { ids } => notes::rm(ids, c, show).await,
        Command::Tags { pad } => notes::tags(pad, c, show).await,
        Command::Pads { all } => notes::pads(all, c, show).await,
        Command::Configure(a) => notes::configure(a, c, show).await,
        Command::Clear {
            pad,
            yes,
            keep_pinned,
        } => notes::clear(pad, yes, keep_pinned, c, show).await,
        Command::Export {
            pad,
            format,
            budget,
            include_superseded,
        } => notes::export(pad, format, budget, include_superseded, c, show).await,
        Command::Watch { pads, tags, kinds } => {
            let kinds = kinds
                .iter()
                .map(|k| args::word("--kind", k))
                .collect::<anyhow::Result<_>>()?;
            let params = crate::protocol::SubscribeParams { pads, tags, kinds };
            notes::watch(params, c, show).await
        }
        Command::Stats => notes::stats(c, show).await,
        Command::Reindex => notes::reindex(c, show).await,
        Command::Task(cmd) => work::task(cmd, c, show).await,
        Command::Plan { pad } => work::plan(pad, c, show).await,
        Command::Remind(a) => work::remind(a, c, show).await,
        Command::Share { id, to } => work::share(id, to, c, show).await,
        Command::Report {
            pad,
            by: None,
            since: None,
            until: None,
        } => work::report(pad, c, show).await,
        Command::Report {
            pad,
            by,
            since,
            until,
        } => history::changes(by, pad, since, until, c, show).await,
        Command::History { id } => history::history(id, c, show).await,
        Command::Trash(a) => history::trash(a, c, show).await,
        Command::Restore(a) => history::restore(a, c, show).await,
        Command::Purge(a) => history::purge(a, c, show).await,
        Command::Token(cmd) => work::token(cmd, c, show).await,
        Command::Agent(cmd) => agents::agent(cmd, c, show).await,
        Command::Send(a) => agents::send(a, c, show).await,
        Command::AgentZero(cmd) => agent_zero::control(cmd, c, show).await,
        Command::Ask(a) => threads::ask(a, c, show).await,
        Command::Reply(a) => threads::reply(a, c, show).await,
        Command::Thread { id } => threads::thread(id, c, show).await,
        Command::Inbox(a) => threads::inbox(a, c, show).await,
    }
}

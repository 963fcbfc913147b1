//! `pad agent add/ls/rm` and `pad send`: the agents the person can reach,
//! and handing them work.

use clap::{Args, Subcommand};

use super::{Show, UsageError};
use crate::client::Client;
use crate::protocol::method as m;
use crate::protocol::*;

#[derive(Subcommand, Debug)]
pub enum AgentCmd {
    /// Register an agent that serves A2A (Agent Zero: Settings → MCP/A2A →
    /// A2A server gives the URL). Its token, when the URL does not carry
    /// one, comes from a file or an environment variable, never the command
    /// line.
    Add {
        name: String,
        /// The agent's A2A endpoint, e.g. http://localhost:50001/a2a/t-TOKEN;
        /// '-' reads it from stdin, so a token in it stays out of `ps`.
        #[arg(long)]
        a2a: String,
        /// Read a bearer token from this file.
        #[arg(long, conflicts_with = "token_env")]
        token_file: Option<std::path::PathBuf>,
        /// Read a bearer token from this environment variable.
        #[arg(long)]
        token_env: Option<String>,
        /// Replace an agent registered under this name.
        #[arg(long)]
        replace: bool,
    },
    /// Registered agents and every author seen lately, with what each is doing.
    Ls {
        /// Authors seen within this long (30m, 2h, 7d); default a day.
        #[arg(long)]
        within: Option<String>,
    },
    /// Forget a registered agent. With notes not yet delivered to it, it is
    /// refused (saying how many) unless --drop-pending drops them.
    Rm {
        name: String,
        #[arg(long)]
        drop_pending: bool,
    },
}

#[derive(Args, Debug)]
pub struct SendArgs {
    /// The agent (or agents, comma-separated) to hand the note to.
    agent: String,
    /// The note; omit it (or give '-') to read from stdin.
    content: Option<String>,
    #[arg(short, long, env = "PAD_PAD", default_value = "inbox")]
    pad: String,
    /// Send it as a reply in this entry's thread (the same conversation).
    #[arg(long)]
    reply_to: Option<String>,
    #[arg(short, long = "tag")]
    tags: Vec<String>,
    #[arg(long, env = "PAD_AUTHOR", default_value = "user")]
    author: String,
}

pub async fn agent(cmd: AgentCmd, c: &mut Client, show: Show) -> anyhow::Result<()> {
    match cmd {
        AgentCmd::Add {
            name,
            a2a,
            token_file,
            token_env,
            replace,
        } => {
            let token = match (token_file, token_env) {
                (Some(path), _) => Some(
                    std::fs::read_to_string(&path)
                        .map_err(|e| {
                            UsageError(format!("cannot read the token file {}: {e}", path.display()))
                        })?
                        .trim()
                        .to_string(),
                ),
                (None, Some(var)) => Some(std::env::var(&var).map_err(|_| {
                    UsageError(format!("the environment variable {var} is not set; export it with the agent's token first"))
                })?),
                (None, None) => None,
            };
            let a2a = if a2a == "-" {
                let mut url = String::new();
                std::io::stdin()
                    .read_line(&mut url)
                    .map_err(|e| UsageError(format!("cannot read the A2A URL from stdin: {e}")))?;
                url.trim().to_string()
            } else {
                a2a
            };
            let params = AgentAddParams {
                name,
                url: a2a,
                token,
                replace,
            };
            let r = c.request::<m::AgentAdd>(&params).await?;
            show.print(&r, |r| {
                let a = &r.agent;
                println!("registered {} at {}", a.name, a.url);
                print_card(a.card.as_ref());
                println!(
                    "hand it work: pad send {} \"…\"  (or @{} in the app's quick box)",
                    a.name, a.name
                );
            })
        }
        AgentCmd::Ls { within } => {
            let params = AgentListParams {
                seen_within: within
                    .as_deref()
                    .map(super::duration_secs)
                    .transpose()?
                    .map(|w| w as u64),
            };
            let r = c.request::<m::AgentList>(&params).await?;
            show.print(&r, print_list)
        }
        AgentCmd::Rm { name, drop_pending } => {
            let params = AgentNameParams {
                name: name.clone(),
                drop_pending,
            };
            let r = c.request::<m::AgentRemove>(&params).await?;
            show.print(&r, |r| {
                println!("removed {name}");
                if r.dropped > 0 {
                    println!("dropped {} unfinished deliveries", r.dropped);
                }
            })
        }
    }
}

pub async fn send(a: SendArgs, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let to: Vec<String> = a
        .agent
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let params = AddParams {
        pad: a.pad,
        content: super::content_arg(a.content)?,
        to: to.clone(),
        tags: a.tags,
        author: Some(a.author),
        reply_to: a.reply_to,
        ..AddParams::default()
    };
    let r = c.write::<m::EntryAdd>(params).await?;
    show.print(&r, |r| {
        let id = &r.entry.id;
        println!("{id} sent to {}", to.join(", "));
        println!("follow it: pad thread {id}");
    })
}

fn print_card(card: Option<&AgentCard>) {
    let Some(card) = card else {
        return;
    };
    println!(
        "  {}{}",
        card.name,
        if card.description.is_empty() {
            String::new()
        } else {
            format!(": {}", card.description)
        }
    );
    for k in &card.skills {
        println!("  skill: {} — {}", k.name, k.description);
    }
}

fn print_list(r: &AgentListResult) {
    if r.agents.is_empty() {
        println!("no agents registered (pad agent add NAME --a2a URL)");
    }
    for a in &r.agents {
        let state = match a.reachable {
            Some(true) => "reachable".to_string(),
            Some(false) => format!("unreachable: {}", a.error.as_deref().unwrap_or("")),
            None => "not tried".to_string(),
        };
        println!("{}  {}  ({state}; {} active)", a.name, a.url, a.active);
        print_card(a.card.as_ref());
    }
    if !r.seen.is_empty() {
        println!("\nseen lately:");
    }
    let preview = super::render::preview;
    for w in &r.seen {
        let mut line = format!("{}  last seen {}", w.author, w.last_seen);
        if w.connected > 0 {
            line.push_str(&format!(", connected ×{}", w.connected));
        }
        if let Some(p) = &w.pad {
            line.push_str(&format!(", last wrote in {p}"));
        }
        println!("{line}");
        for t in &w.claimed {
            println!("  doing [{}] {}", t.id, preview(&t.content));
        }
        for q in &w.open_questions {
            println!("  asks  [{}] {}", q.id, preview(&q.content));
        }
        if let Some(n) = &w.last_note {
            println!("  last  [{}] {}", n.id, preview(&n.content));
        }
    }
}

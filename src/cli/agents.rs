//! `pad agent add/ls/rm` and `pad send`: the agents the person can reach,
//! and handing them work.

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use super::{Out, UsageError};
use crate::client::Client;

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

pub async fn agent(cmd: AgentCmd, c: &mut Client, out: Out<'_>) -> anyhow::Result<()> {
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
            let mut params = json!({"name": name, "url": a2a, "replace": replace});
            if let Some(t) = token {
                params["token"] = json!(t);
            }
            let r = c.call("agent.add", params).await?;
            out(&r, &|r| {
                let a = &r["agent"];
                println!("registered {} at {}", s(&a["name"]), s(&a["url"]));
                print_card(&a["card"]);
                println!(
                    "hand it work: pad send {} \"…\"  (or @{} in the app's quick box)",
                    s(&a["name"]),
                    s(&a["name"])
                );
            });
        }
        AgentCmd::Ls { within } => {
            let mut params = json!({});
            if let Some(w) = within {
                params["seen_within"] = json!(super::duration_secs(&w)?);
            }
            let r = c.call("agent.list", params).await?;
            out(&r, &print_list);
        }
        AgentCmd::Rm { name, drop_pending } => {
            let r = c
                .call(
                    "agent.remove",
                    json!({ "name": name, "drop_pending": drop_pending }),
                )
                .await?;
            out(&r, &|r| {
                println!("removed {name}");
                if let Some(n) = r["dropped"].as_u64().filter(|n| *n > 0) {
                    println!("dropped {n} unfinished deliveries");
                }
            });
        }
    }
    Ok(())
}

pub async fn send(a: SendArgs, c: &mut Client, out: Out<'_>) -> anyhow::Result<()> {
    let content = super::content_arg(a.content)?;
    let to: Vec<&str> = a
        .agent
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let mut params = json!({
        "pad": a.pad, "content": content, "to": to, "tags": a.tags, "author": a.author,
    });
    if let Some(r) = a.reply_to {
        params["reply_to"] = json!(r);
    }
    let r = c.call("entry.add", params).await?;
    out(&r, &|r| {
        let id = s(&r["entry"]["id"]);
        println!("{id} sent to {}", to.join(", "));
        println!("follow it: pad thread {id}");
    });
    Ok(())
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn print_card(card: &Value) {
    if card.is_null() {
        return;
    }
    let desc = s(&card["description"]);
    println!(
        "  {}{}",
        s(&card["name"]),
        if desc.is_empty() {
            String::new()
        } else {
            format!(": {desc}")
        }
    );
    for k in card["skills"].as_array().into_iter().flatten() {
        println!("  skill: {} — {}", s(&k["name"]), s(&k["description"]));
    }
}

fn print_list(r: &Value) {
    let agents = r["agents"].as_array().cloned().unwrap_or_default();
    if agents.is_empty() {
        println!("no agents registered (pad agent add NAME --a2a URL)");
    }
    for a in &agents {
        let state = match a["reachable"].as_bool() {
            Some(true) => "reachable".to_string(),
            Some(false) => format!("unreachable: {}", s(&a["error"])),
            None => "not tried".to_string(),
        };
        println!(
            "{}  {}  ({state}; {} active)",
            s(&a["name"]),
            s(&a["url"]),
            a["active"]
        );
        print_card(&a["card"]);
    }
    let seen = r["seen"].as_array().cloned().unwrap_or_default();
    if !seen.is_empty() {
        println!("\nseen lately:");
    }
    for w in &seen {
        let mut line = format!("{}  last seen {}", s(&w["author"]), s(&w["last_seen"]));
        if let Some(n) = w["connected"].as_u64().filter(|n| *n > 0) {
            line.push_str(&format!(", connected ×{n}"));
        }
        if let Some(p) = w["pad"].as_str() {
            line.push_str(&format!(", last wrote in {p}"));
        }
        println!("{line}");
        for t in w["claimed"].as_array().into_iter().flatten() {
            println!(
                "  doing [{}] {}",
                s(&t["id"]),
                super::render::preview(s(&t["content"]))
            );
        }
        for q in w["open_questions"].as_array().into_iter().flatten() {
            println!(
                "  asks  [{}] {}",
                s(&q["id"]),
                super::render::preview(s(&q["content"]))
            );
        }
        if let Some(n) = w["last_note"].as_object() {
            println!(
                "  last  [{}] {}",
                n["id"].as_str().unwrap_or(""),
                super::render::preview(n["content"].as_str().unwrap_or(""))
            );
        }
    }
}

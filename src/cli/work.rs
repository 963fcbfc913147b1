//! `pad task`, `pad plan`, `pad remind`, `pad share`, `pad report` and
//! `pad token`: the command line of plans, tasks and access.

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use super::{content_arg, duration_secs, render, Out, UsageError};
use crate::client::Client;

#[derive(Subcommand, Debug)]
pub enum TaskCmd {
    /// Add a task (kind task, status todo), optionally after other entries.
    Add {
        /// The task; '-' or nothing reads it from stdin.
        content: Option<String>,
        #[arg(short, long, env = "PAD_PAD", default_value = "inbox")]
        pad: String,
        /// An entry this task waits on (repeat).
        #[arg(long = "after")]
        after: Vec<String>,
        #[arg(short, long = "tag")]
        tags: Vec<String>,
        #[arg(long, env = "PAD_AUTHOR", default_value = "user")]
        author: String,
    },
    /// Take the next ready task of a pad (prints nothing and exits 3 when none is ready).
    Claim {
        #[arg(short, long, env = "PAD_PAD", default_value = "inbox")]
        pad: String,
        #[arg(long, env = "PAD_AUTHOR", default_value = "user")]
        agent: String,
        /// How long the claim holds without a heartbeat: 90s, 15m, 2h.
        #[arg(long)]
        lease: Option<String>,
    },
    /// Extend a task's lease, and say where the work stands.
    Heartbeat {
        id: String,
        #[arg(long)]
        resume: Option<String>,
        #[arg(long)]
        lease: Option<String>,
        #[arg(long, env = "PAD_AUTHOR")]
        agent: Option<String>,
    },
    /// Mark a task done.
    Done {
        id: String,
        #[arg(long)]
        resume: Option<String>,
        #[arg(long, env = "PAD_AUTHOR")]
        agent: Option<String>,
    },
    /// Mark a task failed (with --retry it goes back to the queue).
    Fail {
        id: String,
        #[arg(long)]
        error: Option<String>,
        #[arg(long)]
        resume: Option<String>,
        #[arg(long)]
        retry: bool,
        #[arg(long, env = "PAD_AUTHOR")]
        agent: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum TokenCmd {
    /// Issue a token for an agent; prints the secret once.
    Create {
        #[arg(long)]
        name: String,
        /// Pads it covers: names and prefix patterns such as 'proj-*'
        /// (repeat, or separate with commas).
        #[arg(long, required = true, value_delimiter = ',')]
        pads: Vec<String>,
        /// Read, never write.
        #[arg(long)]
        read_only: bool,
        /// Registered agents it may hand work to ('*' for any; repeat, or
        /// separate with commas). None by default.
        #[arg(long, value_delimiter = ',')]
        agents: Vec<String>,
        /// It may also delete, clear, supersede and reword notes others
        /// wrote in its pads (by default only its own).
        #[arg(long)]
        others: bool,
    },
    /// List tokens (never their secrets).
    List,
    /// Revoke a token: connections using it stop at once.
    Revoke { name: String },
}

#[derive(Args, Debug)]
pub struct RemindArgs {
    /// What to be reminded of; '-' or nothing reads it from stdin.
    content: Option<String>,
    /// Due after this long: 90s, 15m, 2h, 1d.
    #[arg(long = "in", conflicts_with = "at")]
    after: Option<String>,
    /// Due at this RFC 3339 time.
    #[arg(long)]
    at: Option<String>,
    #[arg(short, long, env = "PAD_PAD", default_value = "inbox")]
    pad: String,
    #[arg(long, env = "PAD_AUTHOR", default_value = "user")]
    author: String,
}

fn lease_secs(lease: Option<&str>) -> anyhow::Result<Option<i64>> {
    lease.map(duration_secs).transpose()
}

pub async fn task(cmd: TaskCmd, c: &mut Client, out: Out<'_>) -> anyhow::Result<()> {
    let (method, mut params) = match cmd {
        TaskCmd::Add {
            content,
            pad,
            after,
            tags,
            author,
        } => (
            "entry.add",
            json!({"pad": pad, "content": content_arg(content)?, "kind": "task",
                   "depends_on": after, "tags": tags, "author": author}),
        ),
        TaskCmd::Claim { pad, agent, lease } => (
            "task.claim",
            json!({"pad": pad, "agent": agent, "lease_seconds": lease_secs(lease.as_deref())?}),
        ),
        TaskCmd::Heartbeat {
            id,
            resume,
            lease,
            agent,
        } => (
            "task.heartbeat",
            json!({"id": id, "resume": resume, "agent": agent,
                   "lease_seconds": lease_secs(lease.as_deref())?}),
        ),
        TaskCmd::Done { id, resume, agent } => (
            "task.complete",
            json!({"id": id, "resume": resume, "agent": agent}),
        ),
        TaskCmd::Fail {
            id,
            error,
            resume,
            retry,
            agent,
        } => (
            "task.fail",
            json!({"id": id, "error": error, "resume": resume, "retry": retry, "agent": agent}),
        ),
    };
    super::strip_nulls(&mut params);
    let r = c.call(method, params).await?;
    if method == "task.claim" && r["entry"].is_null() {
        out(&r, &|r| {
            let n = &r["counts"];
            println!(
                "nothing ready: {} running, {} blocked, {} done, {} failed",
                n["running"], n["blocked"], n["done"], n["failed"]
            )
        });
        return Err(NothingReady.into());
    }
    if method == "entry.add" {
        // Like `pad note`: the new id, for scripts to pass to --after.
        out(&r, &|r| {
            println!("{}", r["entry"]["id"].as_str().unwrap_or(""))
        });
    } else {
        out(&r, &|r| render::entry_full(&r["entry"]));
    }
    Ok(())
}

/// `pad task claim` found nothing ready: exit 3, like "not found".
#[derive(Debug, thiserror::Error)]
#[error("no task is ready")]
pub struct NothingReady;

pub async fn plan(pad: String, c: &mut Client, out: Out<'_>) -> anyhow::Result<()> {
    let r = c.call("plan.order", json!({ "pad": pad })).await?;
    out(&r, &|r| render::plan(r));
    Ok(())
}

pub async fn remind(a: RemindArgs, c: &mut Client, out: Out<'_>) -> anyhow::Result<()> {
    let mut params = json!({"pad": a.pad, "content": content_arg(a.content)?, "author": a.author});
    match (a.after, a.at) {
        (Some(d), None) => params["remind_in"] = json!(duration_secs(&d)?),
        (None, Some(t)) => params["remind_at"] = json!(t),
        _ => {
            return Err(UsageError(
                "when? give --in (e.g. --in 30m) or --at (e.g. --at 2026-11-21T17:00:00Z)".into(),
            )
            .into())
        }
    }
    let r = c.call("entry.add", params).await?;
    out(&r, &|r| {
        println!(
            "{} reminds {} at {}",
            r["entry"]["id"].as_str().unwrap_or(""),
            r["entry"]["author"].as_str().unwrap_or(""),
            r["entry"]["remind_at"].as_str().unwrap_or("")
        )
    });
    Ok(())
}

pub async fn share(
    id: String,
    to: Vec<String>,
    c: &mut Client,
    out: Out<'_>,
) -> anyhow::Result<()> {
    let r = c.call("entry.share", json!({"id": id, "to": to})).await?;
    out(&r, &|r| {
        for copy in r["copies"].as_array().into_iter().flatten() {
            println!(
                "{} on {}",
                copy["id"].as_str().unwrap_or(""),
                copy["pad"].as_str().unwrap_or("")
            );
        }
    });
    Ok(())
}

pub async fn report(pad: Option<String>, c: &mut Client, out: Out<'_>) -> anyhow::Result<()> {
    let mut params = json!({ "pad": pad });
    super::strip_nulls(&mut params);
    let r = c.call("report", params).await?;
    out(&r, &|r| render::report(r));
    Ok(())
}

pub async fn token(cmd: TokenCmd, c: &mut Client, out: Out<'_>) -> anyhow::Result<()> {
    match cmd {
        TokenCmd::Create {
            name,
            pads,
            read_only,
            agents,
            others,
        } => {
            let r = c
                .call(
                    "token.create",
                    json!({"name": name, "pads": pads, "read_only": read_only, "agents": agents, "others": others}),
                )
                .await?;
            out(&r, &|r| {
                println!("{}", r["secret"].as_str().unwrap_or(""));
                eprintln!(
                    "token '{}' for {}{}: shown once, the engine keeps only its hash. Give it to the agent as PAD_TOKEN.",
                    r["token"]["name"].as_str().unwrap_or(""),
                    join(&r["token"]["pads"]),
                    match (r["token"]["read_only"] == true, r["token"]["others"] == true) {
                        (true, _) => " (read-only)",
                        (false, true) => " (others' notes too)",
                        (false, false) => "",
                    }
                );
            });
        }
        TokenCmd::List => {
            let r = c.call("token.list", json!({})).await?;
            out(&r, &|r| {
                let tokens = r["tokens"].as_array().cloned().unwrap_or_default();
                if tokens.is_empty() {
                    println!("no tokens");
                }
                for t in &tokens {
                    println!(
                        "{:<20} {:<10} {}  (created {})",
                        t["name"].as_str().unwrap_or(""),
                        if t["read_only"] == true {
                            "read-only"
                        } else {
                            "read-write"
                        },
                        join(&t["pads"]),
                        t["created_at"].as_str().unwrap_or("")
                    );
                }
            });
        }
        TokenCmd::Revoke { name } => {
            let r = c.call("token.revoke", json!({ "name": name })).await?;
            out(&r, &|_| println!("revoked {name}"));
        }
    }
    Ok(())
}

fn join(v: &Value) -> String {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

//! `pad task`, `pad plan`, `pad remind`, `pad share`, `pad report` and
//! `pad token`: the command line of plans, tasks and access.

use clap::{Args, Subcommand};

use super::{content_arg, duration_secs, render, Show, UsageError};
use crate::client::Client;
use crate::model::Kind;
use crate::protocol::method as m;
use crate::protocol::*;

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
        /// The write's idempotency key (default: a fresh one). Give the key
        /// a failed run printed to send that write again: it is stored once.
        #[arg(long, env = "PAD_IDEMPOTENCY_KEY", value_name = "KEY")]
        idempotency_key: Option<String>,
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

fn lease_secs(lease: Option<&str>) -> anyhow::Result<Option<u64>> {
    Ok(lease.map(duration_secs).transpose()?.map(|s| s as u64))
}

pub async fn task(cmd: TaskCmd, c: &mut Client, show: Show) -> anyhow::Result<()> {
    match cmd {
        TaskCmd::Add {
            content,
            pad,
            after,
            tags,
            author,
            idempotency_key,
        } => {
            let params = AddParams {
                pad,
                content: content_arg(content)?,
                kind: Some(Kind::Task),
                depends_on: after,
                tags,
                author: Some(author),
                idempotency_key,
                ..AddParams::default()
            };
            let r = c.write::<m::EntryAdd>(params).await?;
            // Like `pad note`: the new id, for scripts to pass to --after.
            show.print(&r, |r| println!("{}", r.entry.id))
        }
        TaskCmd::Claim { pad, agent, lease } => {
            let params = ClaimParams {
                pad,
                agent: Some(agent),
                lease_seconds: lease_secs(lease.as_deref())?,
                idempotency_key: None,
            };
            let r = c.write::<m::TaskClaim>(params).await?;
            if r.entry.is_none() {
                show.print(&r, |r| {
                    if let Some(n) = &r.counts {
                        println!(
                            "nothing ready: {} running, {} blocked, {} done, {} failed",
                            n.running, n.blocked, n.done, n.failed
                        )
                    }
                })?;
                return Err(NothingReady.into());
            }
            show.print(&r, |r| r.entry.iter().for_each(render::entry_full))
        }
        TaskCmd::Heartbeat {
            id,
            resume,
            lease,
            agent,
        } => {
            let params = HeartbeatParams {
                id,
                resume,
                agent,
                lease_seconds: lease_secs(lease.as_deref())?,
            };
            let r = c.request::<m::TaskHeartbeat>(&params).await?;
            show.print(&r, |r| render::entry_full(&r.entry))
        }
        TaskCmd::Done { id, resume, agent } => {
            let params = CompleteParams { id, resume, agent };
            let r = c.request::<m::TaskComplete>(&params).await?;
            show.print(&r, |r| render::entry_full(&r.entry))
        }
        TaskCmd::Fail {
            id,
            error,
            resume,
            retry,
            agent,
        } => {
            let params = FailParams {
                id,
                error,
                resume,
                retry,
                agent,
            };
            let r = c.request::<m::TaskFail>(&params).await?;
            show.print(&r, |r| render::entry_full(&r.entry))
        }
    }
}

/// `pad task claim` found nothing ready: exit 3, like "not found".
#[derive(Debug, thiserror::Error)]
#[error("no task is ready")]
pub struct NothingReady;

pub async fn plan(pad: String, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let r = c.request::<m::PlanOrder>(&PlanParams { pad }).await?;
    show.print(&r, render::plan)
}

pub async fn remind(a: RemindArgs, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let mut params = AddParams {
        pad: a.pad,
        content: content_arg(a.content)?,
        author: Some(a.author),
        ..AddParams::default()
    };
    match (a.after, a.at) {
        (Some(d), None) => params.remind_in = Some(duration_secs(&d)? as u64),
        (None, Some(t)) => params.remind_at = Some(t),
        _ => {
            return Err(UsageError(
                "when? give --in (e.g. --in 30m) or --at (e.g. --at 2026-11-21T17:00:00Z)".into(),
            )
            .into())
        }
    }
    let r = c.write::<m::EntryAdd>(params).await?;
    show.print(&r, |r| {
        println!(
            "{} reminds {} at {}",
            r.entry.id,
            r.entry.author,
            r.entry.remind_at.as_deref().unwrap_or("")
        )
    })
}

pub async fn share(id: String, to: Vec<String>, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let params = ShareParams {
        id,
        to,
        author: None,
    };
    let r = c.request::<m::EntryShare>(&params).await?;
    show.print(&r, |r| {
        for copy in &r.copies {
            println!("{} on {}", copy.id, copy.pad);
        }
    })
}

pub async fn report(pad: Option<String>, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let r = c.request::<m::Report>(&ReportParams { pad }).await?;
    show.print(&r, render::report)
}

pub async fn token(cmd: TokenCmd, c: &mut Client, show: Show) -> anyhow::Result<()> {
    match cmd {
        TokenCmd::Create {
            name,
            pads,
            read_only,
            agents,
            others,
        } => {
            let params = TokenCreateParams {
                name,
                pads,
                read_only,
                agents,
                others,
            };
            let r = c.request::<m::TokenCreate>(&params).await?;
            show.print(&r, |r| {
                println!("{}", r.secret);
                eprintln!(
                    "token '{}' for {}{}: shown once, the engine keeps only its hash. Give it to the agent as PAD_TOKEN.",
                    r.token.name,
                    r.token.pads.join(", "),
                    match (r.token.read_only, r.token.others) {
                        (true, _) => " (read-only)",
                        (false, true) => " (others' notes too)",
                        (false, false) => "",
                    }
                );
            })
        }
        TokenCmd::List => {
            let r = c.request::<m::TokenList>(&TokenListParams {}).await?;
            show.print(&r, |r| {
                if r.tokens.is_empty() {
                    println!("no tokens");
                }
                for t in &r.tokens {
                    println!(
                        "{:<20} {:<10} {}  (created {})",
                        t.name,
                        if t.read_only {
                            "read-only"
                        } else {
                            "read-write"
                        },
                        t.pads.join(", "),
                        t.created_at
                    );
                }
            })
        }
        TokenCmd::Revoke { name } => {
            let params = TokenRevokeParams { name: name.clone() };
            let r = c.request::<m::TokenRevoke>(&params).await?;
            show.print(&r, |_| println!("revoked {name}"))
        }
    }
}

//! `pad ask`, `pad reply`, `pad thread` and `pad inbox`: the conversation
//! between the person and the agents, at the terminal.

use clap::Args;

use super::{content_arg, render, Show};
use crate::client::Client;
use crate::protocol::method as m;
use crate::protocol::*;

/// `pad ask` ran out of time before anyone answered (exit code 8).
#[derive(Debug, thiserror::Error)]
#[error("no answer yet after {waited} s; the question is {id}: a later answer reaches {author}'s inbox (`pad inbox --author {author}` or `pad thread {id}` shows it)")]
pub struct Unanswered {
    waited: f64,
    id: String,
    author: String,
}

#[derive(Args, Debug)]
pub struct AskArgs {
    /// The question; '-' or nothing reads it from stdin.
    question: Option<String>,
    /// An answer to offer (repeat): shown as buttons and notification actions.
    #[arg(short, long = "choice")]
    choices: Vec<String>,
    /// Seconds to wait for the answer (0-110).
    #[arg(short, long, default_value_t = 60)]
    wait: u64,
    #[arg(short, long, env = "PAD_PAD", default_value = "inbox")]
    pad: String,
    #[arg(long, env = "PAD_AUTHOR", default_value = "user")]
    author: String,
}

#[derive(Args, Debug)]
pub struct ReplyArgs {
    /// The entry answered (an id or a unique prefix).
    id: String,
    /// The reply; '-' or nothing reads it from stdin.
    content: Option<String>,
    /// The pad to write the reply to [default: the entry's own pad].
    #[arg(short, long)]
    pad: Option<String>,
    #[arg(short, long = "tag")]
    tags: Vec<String>,
    #[arg(long, env = "PAD_AUTHOR", default_value = "user")]
    author: String,
}

pub async fn ask(a: AskArgs, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let params = AskParams {
        content: Some(content_arg(a.question)?),
        id: None,
        pad: Some(a.pad),
        choices: a.choices,
        wait_seconds: Some(a.wait),
        author: Some(a.author),
        answer_from: Vec::new(),
        idempotency_key: None,
    };
    let r = c.write::<m::Ask>(params).await?;
    show.print(&r, |r| {
        if let Some(answer) = &r.answer {
            println!("{}", answer.content.trim());
            eprintln!("(answered by {} in {} s)", answer.author, r.waited_seconds);
        }
    })?;
    if r.answer.is_none() {
        return Err(Unanswered {
            waited: r.waited_seconds.round(),
            id: r.question.id,
            author: r.question.author,
        }
        .into());
    }
    Ok(())
}

pub async fn reply(a: ReplyArgs, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let content = content_arg(a.content)?;
    let pad = match a.pad {
        Some(p) => p,
        None => {
            let params = IdParams { id: a.id.clone() };
            c.request::<m::EntryGet>(&params).await?.entry.pad
        }
    };
    let params = AddParams {
        pad,
        content,
        reply_to: Some(a.id),
        tags: a.tags,
        author: Some(a.author),
        ..AddParams::default()
    };
    let r = c.write::<m::EntryAdd>(params).await?;
    show.print(&r, |r| println!("{}", r.entry.id))
}

#[derive(Args, Debug)]
pub struct InboxArgs {
    /// Whose inbox.
    #[arg(long, env = "PAD_AUTHOR", default_value = "user")]
    author: String,
    /// Show without moving the author's cursor past what is shown.
    #[arg(long)]
    peek: bool,
}

pub async fn inbox(a: InboxArgs, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let params = InboxParams {
        author: Some(a.author),
        peek: a.peek,
    };
    let r = c.request::<m::Inbox>(&params).await?;
    show.print(&r, render::inbox)
}

pub async fn thread(id: String, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let r = c.request::<m::EntryThread>(&IdParams { id }).await?;
    show.print(&r, render::thread)
}

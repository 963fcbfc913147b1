//! `pad ask`, `pad reply`, `pad thread` and `pad inbox`: the conversation
//! between the person and the agents, at the terminal.

use clap::Args;
use serde_json::json;

use super::{content_arg, render, Out};
use crate::client::Client;

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

pub async fn ask(a: AskArgs, c: &mut Client, out: Out<'_>) -> anyhow::Result<()> {
    let content = content_arg(a.question)?;
    let r = c
        .call(
            "ask",
            json!({"content": content, "choices": a.choices, "wait_seconds": a.wait,
                   "pad": a.pad, "author": a.author}),
        )
        .await?;
    out(&r, &|r| {
        if let Some(answer) = r["answer"].as_object() {
            println!("{}", answer["content"].as_str().unwrap_or("").trim());
            eprintln!(
                "(answered by {} in {} s)",
                answer["author"].as_str().unwrap_or(""),
                r["waited_seconds"]
            );
        }
    });
    if r["answer"].is_null() {
        return Err(Unanswered {
            waited: r["waited_seconds"].as_f64().unwrap_or(0.0).round(),
            id: r["question"]["id"].as_str().unwrap_or("").to_string(),
            author: r["question"]["author"].as_str().unwrap_or("").to_string(),
        }
        .into());
    }
    Ok(())
}

pub async fn reply(a: ReplyArgs, c: &mut Client, out: Out<'_>) -> anyhow::Result<()> {
    let content = content_arg(a.content)?;
    let pad = match a.pad {
        Some(p) => p,
        None => {
            let parent = c.call("entry.get", json!({"id": a.id})).await?;
            parent["entry"]["pad"]
                .as_str()
                .unwrap_or("inbox")
                .to_string()
        }
    };
    let r = c
        .call(
            "entry.add",
            json!({"pad": pad, "content": content, "reply_to": a.id, "tags": a.tags,
                   "author": a.author}),
        )
        .await?;
    out(&r, &|r| {
        println!("{}", r["entry"]["id"].as_str().unwrap_or(""))
    });
    Ok(())
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

pub async fn inbox(a: InboxArgs, c: &mut Client, out: Out<'_>) -> anyhow::Result<()> {
    let r = c
        .call("inbox", json!({"author": a.author, "peek": a.peek}))
        .await?;
    out(&r, &|r| render::inbox(r));
    Ok(())
}

pub async fn thread(id: String, c: &mut Client, out: Out<'_>) -> anyhow::Result<()> {
    let r = c.call("entry.thread", json!({"id": id})).await?;
    out(&r, &|r| render::thread(r));
    Ok(())
}

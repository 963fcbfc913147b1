//! Threads and questions: `entry.thread`, and `ask` — a question that waits
//! for its answer.
//!
//! A reply names its parent (`reply_to`); the store counts it on the parent
//! and, when it is the first reply by someone other than the parent's
//! author, records it as the parent's answer — in the reply's own
//! transaction. A waiting `ask` is a future parked on a oneshot channel in
//! the bus's `Waiters` (`events.rs`: who hears of a change), keyed by the
//! question's id: no thread and no polling per waiter, so a thousand
//! waiting questions cost a thousand small allocations. `Engine::insert`
//! wakes a question's waiters right after the answering reply is
//! committed. A waiter registers, then looks at the stored question once,
//! so an answer committed in between is never missed.

use std::time::{Duration, Instant};

use super::Engine;
use crate::error::{Error, Result};
use crate::events::EventType;
use crate::guard::Guard;
use crate::model::{self, Entry, Kind};
use crate::protocol::*;
use crate::storage::once::Key;

/// Unregisters a waiter however its wait ends (answer, time-out, or the
/// future dropped with its connection).
/// When the last waiter of a question gives up, says so (`stopped_waiting`).
struct Registered<'a> {
    engine: &'a Engine,
    question: &'a Entry,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        let q = self.question;
        if self.engine.0.bus.waiters.forget_gone(&q.id) {
            self.engine
                .0
                .bus
                .publish(EventType::StoppedWaiting, &q.pad, Some(q.clone()));
        }
    }
}

impl Engine {
    /// An entry and its replies, oldest first; replies on pads a token may
    /// not read are left out.
    pub async fn thread(&self, p: IdParams, guard: &Guard) -> Result<ThreadResult> {
        let id = p.id;
        let (entry, mut replies) = {
            let _turn = self.turn().await?;
            self.db().thread(&id, MAX_THREAD_REPLIES).await?
        };
        replies.retain(|r| guard.covers(&r.pad));
        Ok(ThreadResult { entry, replies })
    }

    /// Writes a question tagged `needs_eyes` and waits for its answer. With
    /// `key` taken by an earlier call, asks nothing and waits for the answer
    /// to that call's question.
    pub async fn ask(
        &self,
        p: AskParams,
        default_author: Option<&str>,
        guard: &Guard,
        key: Option<Key>,
    ) -> Result<AskResult> {
        let wait = p.wait_seconds.unwrap_or(DEFAULT_ASK_WAIT_SECONDS);
        if wait > MAX_ASK_WAIT_SECONDS {
            return Err(Error::over_limit(
                "wait_seconds",
                format!("wait_seconds is {wait}; the most is {MAX_ASK_WAIT_SECONDS} (under the 120 s many agent frameworks allow a tool call). Ask with a shorter wait: an answer that comes later still reaches your inbox."),
                MAX_ASK_WAIT_SECONDS,
                wait,
            ));
        }
        let question = match (p.content, p.id) {
            (None, Some(id)) => {
                let q = self.db().get(&id).await?;
                if q.kind != Kind::Question {
                    return Err(Error::invalid(
                        "id",
                        format!("entry {} is a {}, not a question; give the id of a question to wait for its answer, or 'content' to ask a new one.", q.id, q.kind),
                    ));
                }
                q
            }
            (Some(_), Some(_)) => {
                return Err(Error::invalid(
                    "id",
                    "give either 'content' (a new question) or 'id' (wait for the answer to a question asked before), not both.",
                ))
            }
            (None, None) => {
                return Err(Error::invalid(
                    "content",
                    "ask needs 'content', the question (or 'id' of a question asked before, to wait for its answer).",
                ))
            }
            (Some(content), None) => self.add(
                AddParams {
                    pad: p.pad.unwrap_or_else(|| model::INBOX.to_string()),
                    content,
                    author: p.author,
                    kind: Some(Kind::Question),
                    tags: vec![model::NEEDS_EYES.to_string()],
                    choices: p.choices,
                    // Put to the person: theirs to answer, and the agents'
                    // it names (`rules::replied`).
                    meta: Some({
                        let anyone = p.answer_from.iter().any(|a| a.trim() == "*");
                        let names = match anyone {
                            true => vec!["*".to_string()],
                            false => model::recipients("answer_from", &p.answer_from)?,
                        };
                        let mut m = serde_json::Map::new();
                        m.insert(model::ANSWER_FROM.into(), serde_json::json!(names));
                        m
                    }),
                    ..AddParams::default()
                },
                default_author,
                &Guard::owner(),
                key,
            )
            .await?,
        };
        let started = Instant::now();
        let answer = self
            .await_answer(&question, Duration::from_secs(wait), guard)
            .await?;
        Ok(AskResult {
            question,
            answer,
            waited_seconds: (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        })
    }

    /// The answer to `question` once it is committed, or `None` after
    /// `wait` (or when the engine stops). A token revoked meanwhile ends
    /// the wait with its refusal, and no answer reaches it.
    async fn await_answer(
        &self,
        question: &Entry,
        wait: Duration,
        guard: &Guard,
    ) -> Result<Option<Entry>> {
        let (rx, first) = self.0.bus.waiters.register(&question.id);
        let _registered = Registered {
            engine: self,
            question,
        };
        if first {
            self.0
                .bus
                .publish(EventType::Waiting, &question.pad, Some(question.clone()));
        }
        // An answer committed before the waiter was registered woke nobody.
        if let Some(answer) = self.db().get(&question.id).await?.answer {
            return Ok(Some(self.db().get(&answer).await?));
        }
        if wait.is_zero() {
            return Ok(None);
        }
        let mut stop = self.0.stop.subscribe();
        let answer = tokio::select! {
            answer = tokio::time::timeout(wait, rx) => answer.ok().and_then(Result::ok),
            _ = stop.wait_for(|stopping| *stopping) => None,
            revoked = self.revoked(guard) => return Err(revoked),
        };
        // Revoked between the answer and now: it is not the token's to read.
        self.grant(guard.access())?;
        Ok(answer)
    }

    /// Ends when the token of `guard` is revoked, with the refusal it now
    /// gets; never for the owner. Grants change rarely: a look a second.
    pub(crate) async fn revoked(&self, guard: &Guard) -> Error {
        if guard.grant().is_none() {
            return std::future::pending().await;
        }
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if let Err(e) = self.grant(guard.access()) {
                return e;
            }
        }
    }

    /// A keyed write sent again: the entry it stored, read as it is now
    /// (deleted or purged since, gone for the retry too), and told again —
    /// the engine that wrote it may have died between its commit and its
    /// events. Subscribers get `created` again (an event per id is news
    /// once); an `ask` waiting for it as its answer, here or on another
    /// engine (through its question's `updated`), gets it.
    pub(super) async fn replayed(&self, id: &str) -> Result<Entry> {
        let entry = self.db().get(id).await?;
        self.0.bus.entry_changed(EventType::Created, None, &entry);
        if let Some(parent) = &entry.reply_to {
            if let Ok(q) = self.db().get(parent).await {
                if q.answer.as_deref() == Some(&entry.id) {
                    self.0.bus.waiters.answer(&q.id, &entry);
                    self.0.bus.entry_changed(EventType::Updated, Some(&q), &q);
                }
            }
        }
        Ok(entry)
    }

    /// The questions an `ask` waits for now (for `stats`).
    pub fn waiting_questions(&self) -> Vec<String> {
        self.0.bus.waiters.questions()
    }

    /// `ask` calls waiting now (for `stats`).
    pub fn waiting_asks(&self) -> usize {
        self.0.bus.waiters.count()
    }
}

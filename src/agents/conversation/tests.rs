use super::*;
use crate::agents::a2a::Said;

const GIVE_UP: i64 = 600_000;

fn note(id: &str, author: &str, content: &str) -> Entry {
    serde_json::from_value(serde_json::json!({
        "id": id, "pad": "proj", "author": author, "kind": "note", "content": content,
        "tags": [], "status": null, "assignee": null, "resume": null, "lease_until": null,
        "category": null, "confidence": null, "depends_on": [], "remind_at": null,
        "pinned": false, "meta": null, "created_at": "2026-11-25T00:00:00Z",
        "updated_at": "2026-11-25T00:00:00Z", "version": 1
    }))
    .expect("an entry")
}

fn task(id: &str, state: &str, said: &[&str], status: Option<&str>) -> Task {
    Task {
        id: id.into(),
        context: None,
        state: state.into(),
        status_text: status.map(str::to_string),
        history: said
            .iter()
            .map(|t| Said {
                agent: true,
                text: t.to_string(),
            })
            .collect(),
        artifacts: Vec::new(),
    }
}

fn posts(effects: &[Effect]) -> Vec<(&str, Kind, &str)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Post(p) => Some((p.state.as_str(), p.kind, p.text.as_str())),
            Effect::AskPerson(_) => None,
        })
        .collect()
}

fn started() -> Conversation {
    Conversation::start(&note("n1", "user", "deploy it"), "helper", 0)
}

#[test]
fn a_task_is_followed_to_its_result_with_one_reply_per_change() {
    let mut c = started();
    let fx = c.on(
        Event::Accepted(Reply::Task(task("t1", "submitted", &[], None))),
        0,
        GIVE_UP,
    );
    assert!(fx.is_empty());
    assert_eq!(c.delivery.state, DeliveryState::Sent);
    assert!(c.outbox.is_empty());
    assert_eq!(
        c.last_sent.as_ref().map(|o| o.text.as_str()),
        Some("deploy it")
    );

    let working = task("t1", "working", &["on it"], None);
    let fx = c.on(Event::Polled(working.clone()), 100, GIVE_UP);
    assert_eq!(posts(&fx), [("working", Kind::Note, "on it")]);
    // The same state again: nothing new to say, a quiet poll.
    assert!(c.on(Event::Polled(working), 200, GIVE_UP).is_empty());
    assert_eq!(c.quiet_polls, 1);

    let fx = c.on(
        Event::Polled(task(
            "t1",
            "completed",
            &["on it", "done: v2 is live"],
            None,
        )),
        300,
        GIVE_UP,
    );
    assert_eq!(
        posts(&fx),
        [("completed", Kind::Result, "done: v2 is live")]
    );
    assert_eq!(c.delivery.state, DeliveryState::Done);
    assert_eq!(c.next_at, i64::MAX);
    assert!(!c.is_live());
    let Effect::Post(p) = &fx[0] else {
        unreachable!()
    };
    assert_eq!((p.task.as_str(), p.needs_eyes), ("t1", false));
}

#[test]
fn a_question_waits_for_the_person_and_their_answer_goes_on_the_same_task() {
    let mut c = started();
    c.on(
        Event::Accepted(Reply::Task(task("t1", "working", &[], None))),
        0,
        GIVE_UP,
    );
    let fx = c.on(
        Event::Polled(task("t1", "input-required", &[], Some("Which region?"))),
        100,
        GIVE_UP,
    );
    let [Effect::Post(q)] = fx.as_slice() else {
        panic!("one post: {fx:?}")
    };
    assert!(q.asks && q.needs_eyes && q.kind == Kind::Question && q.text == "Which region?");
    assert_eq!(c.delivery.state, DeliveryState::WaitingForYou);
    c.posted(q, Some("q1".into()));
    assert_eq!(c.delivery.question.as_deref(), Some("q1"));
    c.thread.push("q1".into());

    c.heard(&note("a1", "user", "eu-west"), "q1", 200);
    assert_eq!(
        c.outbox,
        [Outgoing {
            entry: "a1".into(),
            text: "eu-west".into(),
            on_task: Some("t1".into())
        }]
    );
    assert_eq!((c.reply_to.as_str(), c.next_at), ("a1", 200));
}

#[test]
fn a_failing_send_backs_off_then_asks_the_person_once() {
    let mut c = started();
    let fx = c.on(
        Event::NotSent {
            why: "connection refused".into(),
            refused: false,
        },
        0,
        GIVE_UP,
    );
    assert!(fx.is_empty());
    assert_eq!(c.next_at, backoff(1));
    assert_eq!(
        c.delivery.detail.as_deref(),
        Some("not delivered: connection refused")
    );
    let fx = c.on(
        Event::NotSent {
            why: "connection refused".into(),
            refused: false,
        },
        GIVE_UP,
        GIVE_UP,
    );
    let [Effect::AskPerson(text)] = fx.as_slice() else {
        panic!("one question: {fx:?}")
    };
    assert!(
        text.contains("10 min") && text.contains("'retry'") && text.contains("'drop'"),
        "{text}"
    );
    c.asked("q1".into());
    assert_eq!(
        (c.delivery.state, c.next_at),
        (DeliveryState::Failed, i64::MAX)
    );
    // Asked already: the next failure asks nothing more.
    assert!(c
        .on(
            Event::NotSent {
                why: "down".into(),
                refused: false
            },
            GIVE_UP * 2,
            GIVE_UP
        )
        .is_empty());

    // "retry" sends again now; "drop" empties the outbox.
    let mut retried = c.clone();
    retried.heard(&note("r1", "user", "retry"), "q1", 5);
    assert_eq!(
        (
            retried.delivery.state,
            retried.next_at,
            retried.failing_since
        ),
        (DeliveryState::Pending, 5, None)
    );
    assert_eq!(retried.outbox.len(), 1);
    c.heard(&note("d1", "user", " Drop "), "q1", 5);
    assert!(c.outbox.is_empty() && !c.is_live());
}

#[test]
fn a_refused_token_asks_at_once_how_to_register_again() {
    let mut c = started();
    let fx = c.on(
        Event::NotSent {
            why: "HTTP 401".into(),
            refused: true,
        },
        0,
        GIVE_UP,
    );
    let [Effect::AskPerson(text)] = fx.as_slice() else {
        panic!("one question: {fx:?}")
    };
    assert!(text.contains("--replace"), "{text}");
}

#[test]
fn a_lost_task_is_sent_again_once_and_a_second_loss_is_the_persons() {
    let mut c = started();
    c.on(
        Event::Accepted(Reply::Task(task("t1", "working", &[], None))),
        0,
        GIVE_UP,
    );
    let fx = c.on(Event::Lost, 100, GIVE_UP);
    let [Effect::Post(p)] = fx.as_slice() else {
        panic!("one post: {fx:?}")
    };
    // Marked with the task it lost, so the second loss's note is not taken for it.
    assert_eq!(
        (p.task.as_str(), p.state.as_str(), p.needs_eyes),
        ("t1", "lost", false)
    );
    assert_eq!(c.outbox.first().map(|o| o.text.as_str()), Some("deploy it"));
    assert_eq!(
        (c.delivery.state, c.delivery.task.clone()),
        (DeliveryState::Pending, None)
    );

    c.on(
        Event::Accepted(Reply::Task(task("t2", "working", &[], None))),
        200,
        GIVE_UP,
    );
    let fx = c.on(Event::Lost, 300, GIVE_UP);
    let [Effect::Post(p)] = fx.as_slice() else {
        panic!("one post: {fx:?}")
    };
    assert_eq!((p.task.as_str(), p.needs_eyes), ("t2", true));
    assert!(c.outbox.is_empty());
    assert_eq!(
        (c.delivery.state, c.next_at),
        (DeliveryState::Failed, i64::MAX)
    );
}

#[test]
fn polls_slow_down_when_nothing_changes_and_an_answer_at_once_is_the_result() {
    let mut c = started();
    c.on(
        Event::Accepted(Reply::Task(task("t1", "working", &[], None))),
        0,
        GIVE_UP,
    );
    let mut now = 0;
    for _ in 0..60 {
        now += 1;
        c.on(
            Event::Polled(task("t1", "working", &[], None)),
            now,
            GIVE_UP,
        );
    }
    assert_eq!(c.next_at - now, MAX_POLL.as_millis() as i64);
    c.on(Event::Unreachable("timed out".into()), now, GIVE_UP);
    assert_eq!(c.delivery.detail.as_deref(), Some("lost touch: timed out"));

    let mut c = started();
    let fx = c.on(Event::Accepted(Reply::Message("42".into())), 0, GIVE_UP);
    assert_eq!(posts(&fx), [("completed", Kind::Result, "42")]);
    assert_eq!(c.delivery.state, DeliveryState::Done);
}

#[test]
fn a_look_answered_with_another_task_posts_nothing_and_backs_off() {
    let mut c = started();
    c.on(
        Event::Accepted(Reply::Task(task("t1", "working", &[], None))),
        0,
        GIVE_UP,
    );
    // An agent minting a new task on every look once posted 4 notes a second.
    for (i, id) in ["t2", "t3", "t4", "t5"].iter().enumerate() {
        let now = 1_000 * (i as i64 + 1);
        let fx = c.on(
            Event::Polled(task(id, "working", &[&format!("step {i}")], None)),
            now,
            GIVE_UP,
        );
        assert!(fx.is_empty(), "{fx:?}");
        assert_eq!(c.delivery.task.as_deref(), Some("t1"));
        assert!(c.next_at > now + 1_000, "backs off");
    }
    assert!(c
        .delivery
        .detail
        .as_deref()
        .is_some_and(|d| d.contains("asked for task t1, it answered with task t5")));
    assert!(c.is_live());
}

#[test]
fn a_task_completed_with_only_a_status_message_gives_that_message_as_the_result() {
    let mut c = started();
    let fx = c.on(
        Event::Accepted(Reply::Task(task(
            "t1",
            "completed",
            &[],
            Some("deployed v2"),
        ))),
        0,
        GIVE_UP,
    );
    assert_eq!(posts(&fx), [("completed", Kind::Result, "deployed v2")]);
}

/// A look that only moves when to look next is not written to the store;
/// one that changes what the store keeps is.
#[test]
fn only_what_the_store_keeps_counts_as_a_change() {
    let kept = started();
    let mut looked = kept.clone();
    looked.next_at += 5_000;
    looked.quiet_polls += 1;
    assert!(looked.stores_as(&kept));
    looked.on(
        Event::Polled(task("t1", "working", &["on it"], None)),
        1_000,
        GIVE_UP,
    );
    assert!(!looked.stores_as(&kept));
    // As the JSON the store holds says it.
    let json = |c: &Conversation| serde_json::to_string(c).unwrap();
    let mut moved = kept.clone();
    moved.next_at = 42;
    assert_eq!(moved.stores_as(&kept), json(&moved) == json(&kept));
}

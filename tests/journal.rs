//! The insert journal: an acknowledged entry is in the journal before SQLite
//! has it; these tests open the store directly and "crash" it by forgetting
//! it (no drop, so nothing is applied on the way out), then reopen the same
//! files, as a restarted engine would.

use std::path::Path;

use scratchpad::model::Kind;
use scratchpad::storage::once::Once;
use scratchpad::storage::{Added, EntryFilter, NewEntry};
use scratchpad::store::{Durability, Store};

const NOW: i64 = 1_790_000_000_000;

/// A note without an idempotency key is always written now.
trait Written {
    fn written(self) -> Added;
}

impl Written for scratchpad::error::Result<Once<Added>> {
    fn written(self) -> Added {
        match self.expect("the store adds") {
            Once::Wrote(added) => added,
            Once::Again(_) => panic!("a note without a key was answered as a retry"),
        }
    }
}

fn open(dir: &Path) -> Store {
    Store::open(dir, Durability::Normal, Some(7200), 4096, NOW, false).expect("store opens")
}

fn note(pad: &str, content: &str) -> NewEntry {
    NewEntry {
        pad: pad.into(),
        author: "tester".into(),
        kind: Kind::Note,
        content: content.into(),
        tags: vec!["journal".into()],
        status: None,
        assignee: None,
        resume: None,
        category: None,
        confidence: None,
        depends_on: Vec::new(),
        reply_to: None,
        choices: Vec::new(),
        to: Vec::new(),
        supersedes: None,
        remind_at: None,
        pinned: false,
        meta: Some(r#"{"n":1}"#.into()),
        now: NOW,
        handoffs: Vec::new(),
        by_token: false,
        key: None,
    }
}

fn contents(store: &Store, pad: &str) -> Vec<String> {
    let filter = EntryFilter {
        pad: Some(pad.into()),
        ..Default::default()
    };
    let mut page = store.list(&filter, 1000, None).unwrap().entries;
    page.reverse();
    page.into_iter().map(|e| e.content).collect()
}

/// Bytes of records in the journal files (a file that is mapped holds
/// zeros past its records, and an emptied one zeros alone).
fn journal_bytes(dir: &Path) -> u64 {
    ["journal-a", "journal-b"]
        .iter()
        .map(|f| {
            std::fs::read(dir.join(f)).map_or(0, |b| b.iter().filter(|&&x| x != 0).count() as u64)
        })
        .sum()
}

/// Simulates `kill -9`: the store's memory is gone, its files stay.
fn crash(store: Store) {
    std::mem::forget(store);
}

#[test]
fn acknowledged_entries_survive_a_crash_before_they_are_applied() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let mut ids = Vec::new();
    for i in 0..50 {
        let Added {
            entry: e, rolled, ..
        } = store.add(note("p", &format!("note {i}")), None).written();
        assert!(rolled.is_empty());
        ids.push(e.id);
    }
    // Nothing applied them (no applier thread, no read): they are journaled.
    assert!(journal_bytes(dir.path()) > 0);
    crash(store);

    let store = open(dir.path());
    assert_eq!(
        contents(&store, "p"),
        (0..50).map(|i| format!("note {i}")).collect::<Vec<_>>()
    );
    let first = store.get(&ids[0]).unwrap();
    assert_eq!(first.tags, vec!["journal".to_string()]);
    assert_eq!(first.meta.unwrap()["n"], serde_json::json!(1));
    assert_eq!(journal_bytes(dir.path()), 0, "replayed, then emptied");
    // Ids keep growing past the replayed ones.
    let Added { entry: next, .. } = store.add(note("p", "after"), None).written();
    assert!(next.id > ids[49]);
    drop(store);

    // A clean close applies everything and leaves the journal empty.
    assert_eq!(journal_bytes(dir.path()), 0);
    let store = open(dir.path());
    assert_eq!(contents(&store, "p").len(), 51, "replayed exactly once");
}

#[test]
fn a_read_sees_every_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    assert_eq!(store.journal_queue(), 0);
    let Added { entry: e, .. } = store.add(note("p", "just written"), None).written();
    assert_eq!(
        store.journal_queue(),
        1,
        "acknowledged, only in the journal"
    );
    assert_eq!(store.get(&e.id).unwrap().content, "just written");
    assert_eq!(contents(&store, "p"), vec!["just written"]);
    let pads = store.pads(false).unwrap();
    assert_eq!(pads.iter().find(|p| p.name == "p").unwrap().entries, 1);
    // Applying emptied the journal.
    assert_eq!(store.journal_queue(), 0);
    assert_eq!(journal_bytes(dir.path()), 0);
}

#[test]
fn a_just_written_entry_is_read_back_from_the_journal_exactly_as_stored() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let Added { entry: e, .. } = store.add(note("p", "fresh"), None).written();
    assert_eq!(store.get(&e.id).unwrap(), e);
    assert_eq!(store.get(&e.id.to_uppercase()).unwrap(), e);
    assert_eq!(
        store.journal_queue(),
        1,
        "answered from the journal, nothing committed for it"
    );
    // A prefix needs the database: the read applies the journal first, and
    // finds the very same entry there.
    assert_eq!(store.get(&e.id[..10]).unwrap(), e);
    assert_eq!(store.journal_queue(), 0);
    assert_eq!(store.get(&e.id).unwrap(), e);
}

#[test]
fn a_replay_never_brings_back_a_deleted_entry() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let Added { entry: a, .. } = store.add(note("p", "kept"), None).written();
    let Added { entry: b, .. } = store.add(note("p", "deleted"), None).written();
    // The delete applies both first, then removes one.
    store.delete(&b.id, None, 0, "test").unwrap();
    let Added { entry: c, .. } = store.add(note("p", "journaled"), None).written();
    crash(store);

    let store = open(dir.path());
    assert_eq!(contents(&store, "p"), vec!["kept", "journaled"]);
    assert!(store.get(&b.id).is_err());
    assert!(a.id < c.id);
}

#[test]
fn a_torn_last_record_is_skipped_and_a_damaged_one_is_kept_aside() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    store.add(note("p", "first"), None).written();
    store.add(note("p", "second"), None).written();
    crash(store);

    let path = dir.path().join("journal-a");
    let journal = std::fs::read_to_string(&path).unwrap();
    // (A mapped journal holds reserved zeros after its records.)
    let lines: Vec<&str> = journal.trim_end_matches('\0').lines().collect();
    assert_eq!(lines.len(), 2);
    // A damaged first line, the intact second, and a write cut short.
    let damaged = format!("{{\"seq\":1,\"entry\":{{oops\n{}\n{{\"seq\":9", lines[1]);
    std::fs::write(&path, damaged).unwrap();

    let store = open(dir.path());
    assert_eq!(contents(&store, "p"), vec!["second"]);
    let aside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("damaged"))
        .collect();
    assert_eq!(aside.len(), 1, "the damaged file is copied aside");
    let copy = std::fs::read_to_string(aside[0].path()).unwrap();
    assert!(copy.contains("oops"));
}

#[test]
fn entries_that_need_the_database_commit_after_what_was_journaled() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let Added { entry: first, .. } = store.add(note("p", "journaled first"), None).written();
    // depends_on must be checked against the database: a direct commit,
    // which applies the journaled entry before its own, keeping id order.
    let mut task = note("p", "depends on it");
    task.kind = Kind::Task;
    task.depends_on = vec![first.id.clone()];
    let Added { entry: second, .. } = store.add(task, None).written();
    assert!(second.id > first.id);
    assert_eq!(second.depends_on, vec![first.id.clone()]);
    // A pad with a window answers with what it pushed out.
    let Added { rolled, .. } = store.add(note("w", "one"), Some(1)).written();
    assert!(rolled.is_empty());
    let Added { rolled, .. } = store.add(note("w", "two"), Some(1)).written();
    assert_eq!(rolled.len(), 1);
    assert_eq!(rolled[0].content, "one");
    crash(store);
    let store = open(dir.path());
    assert_eq!(
        contents(&store, "p"),
        vec!["journaled first", "depends on it"]
    );
    assert_eq!(contents(&store, "w"), vec!["two"]);
}

#[test]
fn the_journal_is_private_to_its_owner() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    store.add(note("p", "secret plans"), None).written();
    for f in ["journal-a", "journal-b"] {
        let mode = std::fs::metadata(dir.path().join(f))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "{f} is readable by others: {mode:o}");
    }
}

#[test]
fn a_new_data_directory_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("new").join("data");
    drop(open(&data));
    for d in [&data, &dir.path().join("new")] {
        let mode = std::fs::metadata(d).unwrap().permissions().mode();
        assert_eq!(
            mode & 0o077,
            0,
            "{} is open to others: {mode:o}",
            d.display()
        );
    }
}

#[test]
fn a_batch_keeps_each_pads_row_and_the_tag_index_in_step() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    // One pad goes idle past its TTL and is archived.
    store.add(note("old", "before the nap"), None).written();
    let later = NOW + 3 * 3600 * 1000;
    let swept = store.sweep(later, 7 * 86400 * 1000).unwrap();
    assert_eq!(swept.archived, vec!["old".to_string()]);

    // One batch: three pads, one of them the inbox, one archived.
    let at = |mut e: NewEntry, ms: i64| {
        e.now = ms;
        e
    };
    for (pad, content, ms, tags) in [
        ("a", "one", later, vec!["x", "y"]),
        ("inbox", "two", later + 1, vec!["x"]),
        ("a", "three", later + 5, vec![]),
        ("old", "back", later + 2, vec!["y"]),
    ] {
        let mut e = at(note(pad, content), ms);
        e.tags = tags.into_iter().map(String::from).collect();
        store.add(e, None).written();
    }
    assert_eq!(store.journal_queue(), 4);
    let pads = store.pads(true).unwrap();
    let pad = |name: &str| pads.iter().find(|p| p.name == name).unwrap().clone();
    assert_eq!(store.journal_queue(), 0, "listing pads applied the batch");
    assert_eq!(pad("a").entries, 2);
    assert_eq!(
        pad("a").ttl_seconds,
        Some(7200),
        "a new pad gets the default TTL"
    );
    assert_eq!(
        pad("a").last_write_at,
        scratchpad::model::fmt_time(later + 5),
        "the newest write of the batch"
    );
    assert_eq!(pad("inbox").ttl_seconds, None, "the inbox never expires");
    assert_eq!(pad("old").entries, 2);
    assert!(!pad("old").archived, "a write restores an archived pad");
    let tags = store.tags(&EntryFilter::default()).unwrap();
    let count = |t: &str| tags.iter().find(|(n, _)| n == t).map_or(0, |(_, c)| *c);
    assert_eq!(count("x"), 2);
    assert_eq!(count("y"), 2);
    assert_eq!(
        count("journal"),
        1,
        "only the entry written before the batch"
    );
    let tagged = EntryFilter {
        tags: vec!["y".into()],
        ..Default::default()
    };
    let mut found: Vec<String> = store
        .list(&tagged, 10, None)
        .unwrap()
        .entries
        .into_iter()
        .map(|e| e.content)
        .collect();
    found.sort();
    assert_eq!(found, vec!["back", "one"]);
}

/// When the journal thread falls behind (no CPU to spare, or no thread at
/// all, as here), the queue of acknowledged entries must still stay bounded
/// — memory, the journal files, what the next read applies first — instead
/// of growing with every write.
#[test]
fn the_queue_stays_bounded_when_the_journal_thread_falls_behind() {
    const BACKLOG: i64 = 4096;
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()); // no journal thread: `start_applier` is not called
    let writes = 3 * BACKLOG + 100;
    let mut most = 0;
    for i in 0..writes {
        store
            .add(note("flood", &format!("entry {i}")), None)
            .written();
        most = most.max(store.journal_queue());
    }
    assert!(
        most < BACKLOG,
        "the queue reached {most} of {writes} writes: it grows with the writes"
    );
    assert!(
        journal_bytes(dir.path()) < 4096 * 1024,
        "the journal files stay small"
    );
    let pads = store.pads(false).unwrap();
    let flood = pads.iter().find(|p| p.name == "flood").unwrap();
    assert_eq!(flood.entries, writes, "every acknowledged entry is stored");
}

/// The journal thread applies in the background below the requests'
/// priority (nice 19: at the same priority its bursts took the CPU from a
/// request waking on the same core), and everything acknowledged still
/// reaches SQLite without a read asking for it.
#[test]
fn the_journal_thread_applies_below_the_requests_priority() {
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(open(dir.path()));
    store.start_applier();
    let writes = 1000;
    for i in 0..writes {
        store
            .add(note("background", &format!("entry {i}")), None)
            .written();
    }
    let nice_of = |name: &str| -> Option<i64> {
        std::fs::read_dir("/proc/self/task").ok()?.find_map(|t| {
            let t = t.ok()?.path();
            let comm = std::fs::read_to_string(t.join("comm")).ok()?;
            if comm.trim() != name {
                return None;
            }
            // Field 19 of stat is the nice value; the command name (field 2)
            // is in parentheses and has no ')' here.
            let stat = std::fs::read_to_string(t.join("stat")).ok()?;
            let rest = &stat[stat.rfind(')')? + 2..];
            rest.split(' ').nth(16)?.parse().ok()
        })
    };
    // The thread names itself and lowers its priority when it first runs:
    // beside a busy CPU, that can be after the writes above.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while nice_of("pad-journal") != Some(19) {
        assert!(
            std::time::Instant::now() < deadline,
            "the journal thread runs at nice {:?}, not 19",
            nice_of("pad-journal")
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    while store.journal_queue() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "{} entries still journaled after a minute",
            store.journal_queue()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let pads = store.pads(false).unwrap();
    let pad = pads.iter().find(|p| p.name == "background").unwrap();
    assert_eq!(pad.entries, writes, "every acknowledged entry is stored");
}

/// The journal thread sleeps until an entry comes (no looking four times a
/// second on an idle engine), applies what comes after a long quiet, and
/// ends with the store: dropping it wakes the thread to see it gone.
#[test]
fn the_journal_thread_wakes_for_an_entry_after_quiet_and_ends_with_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(open(dir.path()));
    let thread = store.start_applier().expect("the journal thread starts");
    let wait_applied = |store: &Store| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while store.journal_queue() > 0 {
            assert!(std::time::Instant::now() < deadline, "never applied");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    };
    store.add(note("quiet", "before the quiet"), None).written();
    wait_applied(&store);
    // Longer than the thread's old look-again period (250 ms).
    std::thread::sleep(std::time::Duration::from_millis(600));
    store.add(note("quiet", "after the quiet"), None).written();
    wait_applied(&store);
    drop(store);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !thread.is_finished() {
        assert!(
            std::time::Instant::now() < deadline,
            "the journal thread outlived its store"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    thread.join().unwrap();
    let store = open(dir.path());
    let pads = store.pads(false).unwrap();
    assert_eq!(pads.iter().find(|p| p.name == "quiet").unwrap().entries, 2);
}

#[test]
fn a_keyed_note_let_through_only_as_a_retry_writes_nothing_without_its_key() {
    use scratchpad::access::Access;
    use scratchpad::storage::once::Key;
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let mut e = note("p", "a reply whose parent was deleted");
    let mut key = Key::of(&Access::Owner, "entry.add", Some("k-gone"), &"params")
        .unwrap()
        .unwrap();
    // A check refused the call, and only its key's row let it through: the
    // row is not there (a day old, swept), so the refusal stands.
    key.unless_kept = Some(("reply_to", "no entry 'abc'".into()));
    e.key = Some(key.clone());
    let refused = store.add(e, None).unwrap_err();
    assert!(refused.to_string().contains("no entry 'abc'"), "{refused}");
    assert!(contents(&store, "p").is_empty());
    // Its key was not kept either: the same key writes anew.
    let mut e = note("p", "a reply whose parent was deleted");
    key.unless_kept = None;
    e.key = Some(key);
    assert!(matches!(store.add(e, None), Ok(Once::Wrote(_))));
    assert_eq!(contents(&store, "p").len(), 1);
}

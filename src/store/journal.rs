//! The insert journal: an `entry.add` is acknowledged once its entry is here.
//!
//! A commit to SQLite writes every page the insert touched (the entry, the
//! pad index, the pad's row, the tag index) as WAL frames, tens of
//! microseconds on this kind of machine. An append to this journal is one
//! `write(2)`: once it returns, the entry is in the kernel and survives a
//! killed engine, which is the durability promised for an acknowledged write
//! (`Durability::Full` adds an `fdatasync`). The store applies journaled
//! entries to SQLite in batches, off the acknowledgement path, and every
//! read and write of the store applies what is pending first, so nobody
//! ever sees the database without an acknowledged entry.
//!
//! Invariants:
//! - ids are handed out here, under the journal's lock, in append order;
//!   entries are applied in that order, so id order is still commit order;
//! - outside the writer lock, a record in a journal file is an entry not yet
//!   applied: a file is emptied, under the writer lock, as soon as every
//!   record in it is committed. So replaying a file after a crash can never
//!   bring back an entry deleted after it was applied. (A crash between the
//!   commit and the emptying leaves applied records; replay skips ids that
//!   exist, and nothing can have deleted them, as the writer was held.)
//! - two files take turns: appends go to one while the batch taken from the
//!   other is committed, so a steady stream of writes never stops either
//!   file from being emptied.
//!
//! With `normal` durability an acknowledged entry is in the kernel's page
//! cache, which the kernel writes back later. A disk that stops taking that
//! write-back (an I/O error, a file system turned read-only) says so only
//! to whoever syncs: the journal thread syncs the journal files and the
//! database's WAL every `WRITE_BACK_CHECK` while writes come
//! (`check_write_back`), and so does a batch SQLite refused. Once a sync
//! fails, every append is refused and the entries at risk are logged: what
//! was acknowledged in the last `WRITE_BACK_CHECK` before is all a failing
//! disk can cost.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::id::IdGen;
use crate::storage::NewEntry;

mod file;

use file::{io_error, JournalFile};

const FILES: [&str; 2] = ["journal-a", "journal-b"];
/// Where records that SQLite refused, alone, are kept for a person to look at.
pub(crate) const REJECTED_FILE: &str = "journal-rejected";

/// One journaled insert.
#[derive(Serialize, Deserialize)]
pub(crate) struct Record {
    pub seq: i64,
    pub entry: NewEntry,
}

/// An acknowledged entry waiting to be applied. It stays in the queue —
/// readable — until its commit is recorded, batch or no batch.
#[derive(Clone)]
pub(crate) struct Pending {
    pub record: Arc<Record>,
    /// The file its line is in, or `REPLAYED`.
    file: usize,
}

/// Entries acknowledged and not yet committed past which a write applies
/// the queue itself before it is acknowledged. The journal thread normally
/// keeps the queue to a millisecond's worth; should it fall behind (no CPU
/// to spare, or no thread at all), the queue — memory, the journal files,
/// what the next read has to apply first — must not grow with the writes.
pub(crate) const BACKLOG: usize = 4096;

/// `Pending::file` of a record replayed after a crash: it may be in either file.
const REPLAYED: usize = usize::MAX;

/// How often, while writes come, what was acknowledged is checked to have
/// reached the disk (`Journal::check_write_back`).
pub(crate) const WRITE_BACK_CHECK: Duration = Duration::from_millis(100);

pub(crate) struct Journal {
    state: Mutex<State>,
    /// Entries acknowledged and not yet committed (queued, or in a batch
    /// being committed); read without the lock.
    pending: AtomicUsize,
    wake: Arc<Signal>,
    /// The last batch was put back, and nothing was committed since.
    failing: std::sync::atomic::AtomicBool,
    dir: PathBuf,
    sync: bool,
    /// The journal files, for syncing without the lock.
    synced: [(PathBuf, std::fs::File); 2],
    /// Something was appended since the last `check_write_back`.
    written: std::sync::atomic::AtomicBool,
    /// Why the disk no longer stores what is written: appends are refused.
    broken: std::sync::OnceLock<String>,
}

struct State {
    files: [JournalFile; 2],
    /// Records in each file not yet committed to SQLite.
    unapplied: [usize; 2],
    /// Records replayed after a crash not yet committed; they may be in
    /// either file.
    replaying: usize,
    current: usize,
    ids: IdGen,
    /// Every entry acknowledged and not yet committed, in id order; the
    /// first `taken` are in the batch being committed (at most one: taking
    /// needs the writer).
    queue: Vec<Pending>,
    taken: usize,
}

impl Journal {
    /// Opens the journal files in `dir`, returning the records they hold
    /// (in id order) for the store to replay before anything else runs.
    pub fn open(dir: &Path, sync: bool) -> Result<(Journal, Vec<Record>)> {
        let mut records = Vec::new();
        let mut files = Vec::with_capacity(2);
        for name in FILES {
            files.push(JournalFile::open(&dir.join(name), sync, &mut records)?);
        }
        records.sort_by_key(|r| r.seq);
        records.dedup_by_key(|r| r.seq);
        let [a, b]: [JournalFile; 2] = files
            .try_into()
            .map_err(|_| Error::Internal("two files".into()))?;
        let synced = [a.descriptor()?, b.descriptor()?];
        Ok((
            Journal {
                state: Mutex::new(State {
                    files: [a, b],
                    // The store hands back the records it lacks (`replay`).
                    unapplied: [0, 0],
                    replaying: 0,
                    current: 0,
                    ids: IdGen::default(),
                    queue: Vec::new(),
                    taken: 0,
                }),
                pending: AtomicUsize::new(0),
                wake: Arc::default(),
                failing: Default::default(),
                dir: dir.to_path_buf(),
                sync,
                synced,
                written: Default::default(),
                broken: Default::default(),
            },
            records,
        ))
    }

    /// Ids are handed out after `floor`, the largest the database has
    /// seen, and after every id still queued.
    pub fn set_floor(&self, floor: i64) {
        let mut s = self.lock();
        let queued = s.queue.last().map_or(0, |p| p.record.seq);
        s.ids = IdGen::after(floor.max(queued));
    }

    /// Queues records left by a crash (those not yet in the database) to
    /// be applied before anything else; with none, empties both files.
    pub fn replay(&self, records: Vec<Record>) -> Result<()> {
        let mut s = self.lock();
        if records.is_empty() {
            for i in 0..2 {
                s.truncate(i)?;
            }
            return Ok(());
        }
        // Either file may hold any of them: neither is emptied until all are
        // committed (and no append switches to a file that is not empty).
        s.replaying = records.len();
        self.pending.fetch_add(records.len(), Ordering::AcqRel);
        s.queue = records
            .into_iter()
            .map(|record| Pending {
                record: Arc::new(record),
                file: REPLAYED,
            })
            .collect();
        Ok(())
    }

    /// Appends an entry and hands out its id; once this returns the entry
    /// survives a crash of the engine.
    pub fn append(&self, entry: NewEntry) -> Result<i64> {
        if let Some(why) = self.broken.get() {
            return Err(Error::Unavailable(format!(
                "the disk of the data directory {} no longer stores what the engine writes ({why}), so the entry was not stored; stop the engine, fix the disk (is its file system read-only, or failing?) and start it again",
                self.dir.display()
            )));
        }
        let mut s = self.lock();
        let seq = s.ids.next(entry.now);
        let record = Record { seq, entry };
        // Sized for a typical note, so the line is not grown on the way.
        let mut line = Vec::with_capacity(512 + record.entry.content.len());
        serde_json::to_writer(&mut line, &record).expect("records serialize");
        line.push(b'\n');
        let cur = s.current;
        if let Err(e) = s.files[cur].append(&line, self.sync) {
            return Err(Error::Unavailable(format!(
                "cannot write the insert journal {} ({e}), so the entry was not stored; free disk space or check the disk, then retry",
                s.files[cur].path().display()
            )));
        }
        s.unapplied[cur] += 1;
        self.written.store(true, Ordering::Release);
        s.queue.push(Pending {
            record: Arc::new(record),
            file: cur,
        });
        if self.pending.fetch_add(1, Ordering::Release) == 0 {
            self.wake.raise();
        }
        Ok(seq)
    }

    /// Hands out an id for an entry committed directly (not journaled),
    /// with everything appended before it, which must be committed first.
    pub fn next_id(&self, now: i64) -> (i64, Vec<Pending>) {
        let mut s = self.lock();
        let batch = self.take_locked(&mut s, usize::MAX);
        (s.ids.next(now), batch)
    }

    /// A copy of the queued entry with this id, if it is queued.
    pub fn find(&self, seq: i64) -> Option<NewEntry> {
        let s = self.lock();
        // The queue is in id order: appends come in id order, and a batch
        // being committed stays at its head until it is.
        let at = s.queue.binary_search_by_key(&seq, |p| p.record.seq).ok()?;
        Some(s.queue[at].record.entry.clone())
    }

    /// Queued entries with ids in `lo..=hi` (an id prefix's range), newest
    /// first, at most `max`.
    pub fn find_range(&self, lo: i64, hi: i64, max: usize) -> Vec<(i64, NewEntry)> {
        if !self.has_pending() {
            return Vec::new();
        }
        let s = self.lock();
        s.queue
            .iter()
            .rev()
            .filter(|p| (lo..=hi).contains(&p.record.seq))
            .take(max)
            .map(|p| (p.record.seq, p.record.entry.clone()))
            .collect()
    }

    /// Whether entries are acknowledged but not yet committed.
    pub fn has_pending(&self) -> bool {
        self.pending() > 0
    }

    /// Entries acknowledged but not yet committed.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Acquire)
    }

    /// Takes the oldest pending entries, at most `max`, for the caller, who
    /// holds the writer, to commit; appends continue into the other file
    /// meanwhile. The entries stay queued, and readable, until `committed`
    /// (or `restore`).
    pub fn take(&self, max: usize) -> Vec<Pending> {
        if !self.has_pending() {
            return Vec::new();
        }
        let mut s = self.lock();
        self.take_locked(&mut s, max)
    }

    fn take_locked(&self, s: &mut State, max: usize) -> Vec<Pending> {
        let other = 1 - s.current;
        // Only switch to an empty file: a file is emptied when all of its
        // records are applied, and that must stay true of the one appended to.
        if s.unapplied[other] == 0 && s.files[other].len() == 0 {
            s.current = other;
        }
        let end = s.queue.len().min(s.taken.saturating_add(max));
        let batch = s.queue[s.taken..end].to_vec();
        s.taken = end;
        batch
    }

    /// Records that `batch` is committed; empties every file whose records
    /// are now all applied. The caller still holds the writer.
    pub fn committed(&self, batch: &[Pending]) {
        if !batch.is_empty() && self.failing.swap(false, Ordering::AcqRel) {
            tracing::info!(
                "the database takes writes again: {} journaled entries stored",
                batch.len()
            );
        }
        let mut s = self.lock();
        for p in batch {
            match p.file {
                REPLAYED => s.replaying -= 1,
                f => s.unapplied[f] -= 1,
            }
        }
        // All of them are in the taken head, in id order (as is `batch`).
        let before = s.queue.len();
        let taken = s.taken;
        let left: Vec<Pending> = s
            .queue
            .drain(..taken)
            .filter(|p| {
                batch
                    .binary_search_by_key(&p.record.seq, |b| b.record.seq)
                    .is_err()
            })
            .collect();
        s.taken = left.len();
        s.queue.splice(0..0, left);
        debug_assert_eq!(before - s.queue.len(), batch.len());
        self.pending.fetch_sub(batch.len(), Ordering::AcqRel);
        for i in 0..2 {
            if s.unapplied[i] == 0 && s.replaying == 0 {
                if let Err(e) = s.truncate(i) {
                    // Harmless until a crash: replay skips ids that exist.
                    tracing::warn!("{e}");
                }
            }
        }
    }

    /// Puts back what is left of the batch, which could not be committed
    /// (`why`): it is still at the head of the queue, ahead of newer
    /// entries, and is taken again by the next try. Logged once, when the
    /// store starts refusing: the journal thread retries every second, and
    /// every write tries too.
    pub fn restore(&self, batch: Vec<Pending>, why: &Error) {
        let n = batch.len();
        {
            let mut s = self.lock();
            debug_assert_eq!(s.taken, n);
            s.taken = 0;
        }
        // A full disk still takes what the journal reserved; a disk that
        // turned read-only or fails takes nothing: look now.
        self.written.store(true, Ordering::Release);
        self.check_write_back(None);
        if !self.failing.swap(true, Ordering::AcqRel) {
            tracing::error!(
                "{n} acknowledged entries cannot be stored yet ({why}); they stay in the journal and are retried every second (logged again once they are stored)"
            );
        }
    }

    /// Keeps a record SQLite refused on its own in `journal-rejected`, so it
    /// is never silently lost, and forgets it.
    pub fn reject(&self, p: Pending, why: &str) {
        tracing::error!(
            "entry {} could not be stored ({why}); it is kept in {}",
            crate::id::encode(p.record.seq),
            self.dir.join(REJECTED_FILE).display()
        );
        let path = self.dir.join(REJECTED_FILE);
        let saved = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut f| {
                let mut line = serde_json::to_vec(&p.record).expect("records serialize");
                line.push(b'\n');
                f.write_all(&line)
            });
        if let Err(e) = saved {
            tracing::error!("{}", io_error("write", &path, e));
        }
        self.committed(std::slice::from_ref(&p));
    }

    /// Whether something was appended since the last `check_write_back`.
    pub fn written(&self) -> bool {
        self.written.load(Ordering::Acquire)
    }

    /// Syncs the journal files and `wal` (the database's WAL) if anything
    /// was appended since the last look: a sync that fails means the disk
    /// no longer stores what the engine writes, and from then on every
    /// append is refused, loudly. Nothing to do with `full` durability,
    /// where every append and commit is synced already.
    pub fn check_write_back(&self, wal: Option<(&Path, &std::fs::File)>) {
        if self.sync || self.broken.get().is_some() || !self.written.swap(false, Ordering::AcqRel) {
            return;
        }
        let files = self.synced.iter().map(|(p, f)| (p.as_path(), f));
        for (path, file) in files.chain(wal) {
            if let Err(e) = file.sync_data() {
                self.break_down(&format!("{}: {e}", path.display()));
                return;
            }
        }
    }

    /// Stops acknowledging: the disk failed to store what was written.
    fn break_down(&self, why: &str) {
        if self.broken.set(why.to_owned()).is_err() {
            return;
        }
        let s = self.lock();
        let ids: Vec<String> = s
            .queue
            .iter()
            .take(50)
            .map(|p| crate::id::encode(p.record.seq))
            .collect();
        tracing::error!(
            "the disk of {} no longer stores what the engine writes ({why}); every write is refused from now on. Entries acknowledged in the last {} ms may be lost with the kernel's cache; {} acknowledged entries are not in the database yet{}{}. Stop the engine, fix the disk, and start it again",
            self.dir.display(),
            WRITE_BACK_CHECK.as_millis(),
            s.queue.len(),
            if ids.is_empty() { String::new() } else { format!(": {}", ids.join(" ")) },
            if s.queue.len() > ids.len() { " …" } else { "" },
        );
    }

    /// Whether SQLite refused the last batch and has stored nothing since (a
    /// full or failing disk): only the journal thread's retries, a second
    /// apart, try again.
    pub fn failing(&self) -> bool {
        self.failing.load(Ordering::Acquire)
    }

    /// Whether the queue is so far behind that a write must wait for it to be
    /// applied: `BACKLOG` entries, and SQLite is taking them (retrying a
    /// refused batch on every write would only slow a full disk down).
    pub fn overflowing(&self) -> bool {
        self.pending() >= BACKLOG && !self.failing()
    }

    /// What the applying thread waits on: raised when entries become pending.
    pub fn waker(&self) -> Arc<Signal> {
        self.wake.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Journal {
    /// The journal thread sleeps until an entry comes: the store's end
    /// wakes it too, so it sees the store gone and ends.
    fn drop(&mut self) {
        self.wake.raise();
        if let Some(why) = self.broken.get() {
            tracing::error!(
                "stopping with a disk that does not store what the engine writes ({why}): {} acknowledged entries were not stored in the database; check the disk before starting again",
                self.pending()
            );
        }
    }
}

impl State {
    fn truncate(&mut self, i: usize) -> Result<()> {
        let file = &mut self.files[i];
        file.empty().map_err(|e| io_error("empty", file.path(), e))
    }
}

/// A raised flag and a condition variable: no wake-up is lost between a
/// check and a wait.
#[derive(Default)]
pub(crate) struct Signal {
    raised: Mutex<bool>,
    cond: Condvar,
}

impl Signal {
    fn raise(&self) {
        *self.raised.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.cond.notify_one();
    }

    /// Waits until raised (or `timeout`, if any, passes), and lowers the flag.
    pub fn wait(&self, timeout: Option<Duration>) {
        let raised = self.raised.lock().unwrap_or_else(|p| p.into_inner());
        let mut raised = match timeout {
            Some(t) => {
                let waited = self.cond.wait_timeout_while(raised, t, |r| !*r);
                waited.unwrap_or_else(|p| p.into_inner()).0
            }
            None => {
                let waited = self.cond.wait_while(raised, |r| !*r);
                waited.unwrap_or_else(|p| p.into_inner())
            }
        };
        *raised = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(content: &str) -> NewEntry {
        serde_json::from_value(serde_json::json!({
            "pad": "p", "author": "a", "kind": "note", "content": content,
            "tags": [], "status": null, "assignee": null, "resume": null,
            "category": null, "confidence": null, "depends_on": [],
            "remind_at": null, "pinned": false, "meta": null, "now": 1,
        }))
        .unwrap()
    }

    /// A record names only the fields its note has, and a record written
    /// with every field (as earlier builds wrote them) reads the same.
    #[test]
    fn records_name_what_a_note_has_and_older_full_records_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let full = entry("an older record");
        let mut rich = entry("a task");
        rich.tags = vec!["x".into()];
        rich.status = Some(crate::model::Status::Todo);
        rich.pinned = true;
        rich.to = vec!["agent-zero".into()];
        rich.meta = Some(r#"{"k":1}"#.into());
        {
            let (j, _) = Journal::open(dir.path(), false).unwrap();
            j.append(entry("plain")).unwrap();
            j.append(rich).unwrap();
        }
        let written = std::fs::read_to_string(dir.path().join(FILES[0])).unwrap();
        let written = written.trim_end_matches('\0');
        let plain = written.lines().next().unwrap();
        assert!(
            !plain.contains("null") && !plain.contains("[]") && !plain.contains("false"),
            "{plain}"
        );
        // An older build's record, every field named, at the end of the file.
        let older = serde_json::json!({"seq": 1_i64 << 58, "entry": {
            "pad": "p", "author": "a", "kind": "note", "content": "an older record",
            "tags": [], "status": null, "assignee": null, "resume": null,
            "category": null, "confidence": null, "depends_on": [], "reply_to": null,
            "choices": [], "to": [], "supersedes": null, "remind_at": null,
            "pinned": false, "meta": null, "now": 1, "handoffs": [], "by_token": false,
        }});
        // (Past the records the mapped file holds zeros: the older record
        // goes where the next would.)
        std::fs::write(dir.path().join(FILES[0]), format!("{written}{older}\n")).unwrap();
        let (_, replayed) = Journal::open(dir.path(), false).unwrap();
        let read: Vec<&NewEntry> = replayed.iter().map(|r| &r.entry).collect();
        assert_eq!(read.len(), 3);
        assert_eq!(read[0].content, "plain");
        assert!(read[0].tags.is_empty() && read[0].status.is_none() && !read[0].pinned);
        let task = read[1];
        assert_eq!(task.tags, ["x"]);
        assert_eq!(task.status, Some(crate::model::Status::Todo));
        assert!(task.pinned);
        assert_eq!(task.to, ["agent-zero"]);
        assert_eq!(task.meta.as_deref(), Some(r#"{"k":1}"#));
        assert_eq!(format!("{:?}", read[2]), format!("{full:?}"));
    }

    fn queued(j: &Journal) -> Vec<String> {
        j.find_range(0, i64::MAX, usize::MAX)
            .into_iter()
            .rev()
            .map(|(_, e)| e.content)
            .collect()
    }

    /// An entry in a batch being committed is still readable from the
    /// queue — while its commit fails and is retried too — and leaves the
    /// queue only once its commit is recorded (the reads of a disk that
    /// refuses writes answer from the queue, without waiting for a batch).
    #[test]
    fn a_taken_batch_stays_readable_until_committed() {
        let dir = tempfile::tempdir().unwrap();
        let (j, _) = Journal::open(dir.path(), false).unwrap();
        let seqs: Vec<i64> = ["one", "two", "three"]
            .map(|c| j.append(entry(c)).unwrap())
            .to_vec();
        let batch = j.take(usize::MAX);
        assert_eq!(batch.len(), 3);
        assert_eq!(queued(&j), ["one", "two", "three"], "taken, still queued");
        assert_eq!(j.find(seqs[1]).unwrap().content, "two");
        let newer = j.append(entry("four")).unwrap();

        j.restore(batch, &Error::Unavailable("disk full".into()));
        assert_eq!(queued(&j), ["one", "two", "three", "four"]);
        let batch = j.take(usize::MAX);
        assert_eq!(batch.len(), 4, "the retry takes it all, in id order");
        assert!(j.take(usize::MAX).is_empty(), "nothing taken twice");

        // Stored one at a time: the first and third go, the others wait.
        j.committed(&[batch[0].clone(), batch[2].clone()]);
        assert_eq!(queued(&j), ["two", "four"]);
        assert_eq!(j.pending(), 2);
        j.restore(
            vec![batch[1].clone(), batch[3].clone()],
            &Error::Unavailable("x".into()),
        );
        let batch = j.take(usize::MAX);
        assert_eq!(
            batch.iter().map(|p| p.record.seq).collect::<Vec<_>>(),
            [seqs[1], newer]
        );
        j.committed(&batch);
        assert!(queued(&j).is_empty() && !j.has_pending());
    }
}

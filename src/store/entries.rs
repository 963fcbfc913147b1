//! Entry reads and writes.

use rusqlite::{params, params_from_iter, Connection};

use super::journal::{Journal, Pending, Record};
use super::room;
use super::sqlite::read_entry;
use super::sqlite::ready;
use super::Sqlite;
use super::{in_transaction, Store, Writer};
use crate::error::{Error, Result};
use crate::id::{self, ID_LEN};
use crate::model::{Category, Entry, Status};
use crate::storage::once::{self, Key, Once};
use crate::storage::query::ENTRY_COLUMNS;
use crate::storage::rules::{ambiguous, new_entry, no_entry, prefix_range, stamp};
use crate::storage::Entries;
use crate::storage::EntryFilter;
use crate::storage::Fut;
use crate::storage::Inbox;
use crate::storage::Visible;
use crate::storage::{entries, inbox, write};
use crate::storage::{Added, NewEntry, Page, Patch};

/// Commits journaled entries, in id order, in one transaction. If SQLite
/// cannot write (a full or failing disk: `Error::Unavailable`), the batch
/// goes back to wait for the next try. If it refused the batch for another
/// reason, each entry is tried alone, in order: one refused by itself is set
/// aside in the journal's rejected file — unless none could be stored, which
/// points at the database rather than the entries, and they all wait for the
/// next try. Whatever waits is always everything from some id on, so ids
/// stay in commit order (the indexers follow it).
pub(crate) fn apply(w: &mut Writer, journal: &Journal, batch: Vec<Pending>) {
    if batch.is_empty() {
        return;
    }
    // After a refused batch, the WAL is copied into `pad.db` first (every
    // commit on the writer does so too once the WAL is large: `room`).
    if journal.failing() {
        if let Err(e) = room::checkpoint(w) {
            return journal.restore(batch, &e);
        }
    }
    let together = in_transaction(w, |w| {
        insert_rows(
            &w.conn,
            batch.iter().map(|p| (p.record.seq, &p.record.entry)),
        )
    });
    let e = match together {
        Ok(()) => return journal.committed(&batch),
        Err(e) => e,
    };
    if matches!(e, Error::Unavailable(_)) {
        return journal.restore(batch, &e);
    }
    if !journal.failing() {
        tracing::warn!(
            "applying {} journaled entries failed ({e}); trying each alone",
            batch.len()
        );
    }
    let (mut stored, mut refused, mut wait) = (Vec::new(), Vec::new(), Vec::new());
    let mut why = e;
    let mut rest = batch.into_iter();
    while let Some(p) = rest.next() {
        let alone = in_transaction(w, |w| {
            insert_rows(&w.conn, [(p.record.seq, &p.record.entry)])
        });
        match alone {
            Ok(()) => stored.push(p),
            Err(e @ Error::Unavailable(_)) => {
                why = e;
                wait.push(p);
                wait.extend(rest);
                break;
            }
            Err(e) => refused.push((p, e)),
        }
    }
    journal.committed(&stored);
    if stored.is_empty() && !refused.is_empty() {
        let mut all: Vec<Pending> = refused.drain(..).map(|(p, _)| p).collect();
        all.append(&mut wait);
        wait = all;
    }
    for (p, e) in refused {
        journal.reject(p, &e.to_string());
    }
    if !wait.is_empty() {
        journal.restore(wait, &why);
    }
}

/// The journal records left by a crash that are not in the database.
pub(crate) fn not_stored(conn: &Connection, records: Vec<Record>) -> Result<Vec<Record>> {
    let mut stmt = conn.prepare_cached("SELECT 1 FROM entries WHERE seq = ?")?;
    let mut out = Vec::with_capacity(records.len());
    for r in records {
        if !stmt.exists([r.seq])? {
            out.push(r);
        }
    }
    Ok(out)
}

/// Inserts entries (their `depends_on` already resolved to full ids) with
/// their bookkeeping: `entry_tags` rows, and each pad's row — created on its
/// first entry, its count and last write moved on, restored if archived —
/// once per pad, however many of its entries the batch holds. Run inside a
/// transaction: the rows must commit together.
pub(super) fn insert_rows<'a>(
    conn: &Connection,
    rows: impl IntoIterator<Item = (i64, &'a NewEntry)>,
) -> Result<()> {
    let mut entry = conn.prepare_cached(
        "INSERT INTO entries (seq, pad, author, kind, content, tags, status, assignee, resume, \
         category, confidence, depends_on, remind_at, pinned, meta, created_at, updated_at, \
         reply_to, choices, addressed_to, supersedes, claimed_at, finished_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )?;
    let mut tag =
        conn.prepare_cached("INSERT OR IGNORE INTO entry_tags (seq, tag) VALUES (?, ?)")?;
    let mut handoff = conn.prepare_cached(
        "INSERT OR IGNORE INTO deliveries (entry, agent, root, pad, updated_at) VALUES (?, ?, ?, ?, ?)",
    )?;
    // (pad, entries, last write): a batch touches few pads.
    let mut pads: Vec<(&str, i64, i64)> = Vec::new();
    for (seq, e) in rows {
        let stamped = stamp(None, e.status, e.now);
        entry.execute(params![
            seq,
            e.pad,
            e.author,
            e.kind.as_str(),
            e.content,
            json_list(&e.tags),
            e.status.map(Status::as_str),
            e.assignee,
            e.resume,
            e.category.map(Category::as_str),
            e.confidence,
            json_list(&e.depends_on),
            e.remind_at,
            e.pinned,
            e.meta,
            e.now,
            e.now,
            e.reply_to.as_deref().and_then(id::decode),
            (!e.choices.is_empty()).then(|| json_list(&e.choices)),
            (!e.to.is_empty()).then(|| json_list(&e.to)),
            e.supersedes.as_deref().and_then(id::decode),
            stamped.and_then(|s| s.claimed_at).flatten(),
            stamped.and_then(|s| s.finished_at),
        ])?;
        for t in &e.tags {
            tag.execute(params![seq, t])?;
        }
        for h in &e.handoffs {
            let root = h.root.as_deref().and_then(id::decode).unwrap_or(seq);
            handoff.execute(params![seq, h.agent, root, e.pad, e.now])?;
        }
        match pads.iter_mut().find(|p| p.0 == e.pad) {
            Some(p) => {
                p.1 += 1;
                p.2 = p.2.max(e.now);
            }
            None => pads.push((&e.pad, 1, e.now)),
        }
    }
    let mut pad = conn.prepare_cached(
        "INSERT INTO pads (name, ttl_seconds, created_at, last_write_at, entries) \
         VALUES (?1, CASE WHEN ?1 = 'inbox' THEN NULL \
                     ELSE (SELECT value FROM settings WHERE key = 'default_ttl_seconds') END, \
                 ?3, ?3, ?2) \
         ON CONFLICT (name) DO UPDATE SET \
             last_write_at = max(last_write_at, excluded.last_write_at), \
             entries = entries + excluded.entries, \
             archived_at = NULL",
    )?;
    for (name, n, last) in pads {
        pad.execute(params![name, n, last])?;
    }
    Ok(())
}

pub(crate) fn json_list<T: serde::Serialize>(items: &[T]) -> String {
    serde_json::to_string(items).expect("strings serialize")
}

impl Store {
    /// Inserts an entry.
    ///
    /// A plain entry is journaled (see `store::journal`) and applied to
    /// SQLite in the background, with whatever else is pending, in one
    /// transaction. An entry that needs the database to be written — its
    /// `depends_on`, `reply_to` or `supersedes` must exist, its pad's window drops older
    /// entries, or it moves its parent's reply count — is committed
    /// directly, after everything journaled before it; so is one with an
    /// idempotency key, with its key's row (`storage::once`).
    pub fn add(&self, e: NewEntry, max_entries: Option<i64>) -> Result<Once<Added>> {
        if e.key.is_none()
            && e.depends_on.is_empty()
            && e.reply_to.is_none()
            && e.supersedes.is_none()
            && max_entries.is_none()
        {
            let seq = self.journal.append(e.clone())?;
            if self.journal.overflowing() {
                // Writes come faster than the journal can be applied at all:
                // this one waits while it is (taking the writer applies it).
                drop(self.writer());
            }
            return Ok(Once::Wrote(Added {
                entry: new_entry(seq, e),
                rolled: Vec::new(),
                parent: None,
            }));
        }
        let mut w = self.writer();
        // Ids are commit order: whatever was journaled meanwhile goes first.
        let (seq, earlier) = self.journal.next_id(e.now);
        apply(&mut w, &self.journal, earlier);
        in_transaction(&mut w, |w| {
            ready(write::add(&mut self.adding_tx(w, seq, max_entries), e))
        })
    }

    /// One entry by id or unique id prefix (archived pads included: an id is explicit).
    pub fn get(&self, id: &str) -> Result<Entry> {
        if let Some(e) = self.journaled(id) {
            return Ok(e);
        }
        let conn = self.reader()?;
        match resolve(&conn, &self.journal, "id", id) {
            Ok((seq, _)) => load(&conn, seq),
            // Only in the journal, named by a prefix (the database refuses
            // writes): reads keep working.
            Err(e @ Error::Unavailable(_)) => match id::prefix_range(&id.trim().to_lowercase())
                .map(|(lo, hi)| self.journal.find_range(lo, hi, 2))
                .as_deref()
            {
                Some([(seq, e)]) => Ok(new_entry(*seq, e.clone())),
                Some([_, _]) => Err(ambiguous("id", id)),
                _ => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    /// An entry still only in the journal, asked for by its full id: answered
    /// from the queue, so a read straight after a write need not commit it
    /// first. The queued copy is the entry as acknowledged, and nothing can
    /// have changed it since: edits and deletions take the writer, which
    /// applies the queue first. (An entry in a batch being committed stays
    /// queued until its commit is recorded.)
    fn journaled(&self, id: &str) -> Option<Entry> {
        if !self.journal.has_pending() {
            return None;
        }
        let id = id.trim().to_lowercase();
        if id.len() != ID_LEN {
            return None;
        }
        let (seq, _) = id::prefix_range(&id)?;
        self.journal.find(seq).map(|e| new_entry(seq, e))
    }

    /// `rows` (newest first) with the matching entries still only in the
    /// journal ahead of them — while the database refuses writes, an
    /// acknowledged entry is listed all the same. Journaled ids are newer
    /// than every stored one (entries are stored in id order), but for a
    /// batch just committed, still queued until that is recorded: those
    /// the page holds already are left out.
    fn with_journaled(
        &self,
        conn: &Connection,
        filter: &EntryFilter,
        cursor: Option<i64>,
        rows: Vec<(i64, Entry)>,
    ) -> Result<Vec<(i64, Entry)>> {
        let queued = self
            .journal
            .find_range(0, cursor.map_or(i64::MAX, |c| c - 1), usize::MAX);
        let archived: std::collections::HashSet<String> = conn
            .prepare_cached("SELECT name FROM pads WHERE archived_at IS NOT NULL")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let is_archived = |pad: &str| archived.contains(pad);
        let newest_stored = rows.first().map_or(i64::MIN, |r| r.0);
        let mut out: Vec<(i64, Entry)> = queued
            .into_iter()
            .filter(|(seq, e)| *seq > newest_stored && filter.admits(e, &is_archived))
            .map(|(seq, e)| (seq, new_entry(seq, e)))
            .collect();
        out.extend(rows);
        Ok(out)
    }

    /// Deletes one entry; with `if_version`, only if it is still at that version.
    /// Returns the entry and the change that kept it in the trash.
    pub fn delete(
        &self,
        id: &str,
        if_version: Option<i64>,
        now: i64,
        by: &str,
    ) -> Result<(Entry, i64)> {
        let mut w = self.writer();
        in_transaction(&mut w, |w| {
            ready(write::delete(&mut self.tx(w), id, if_version, now, by))
        })
    }

    /// Entries matching `filter`, newest first, `limit` at a time
    /// (`storage::entries::list`), with those still only in the journal.
    pub fn list(&self, filter: &EntryFilter, limit: u32, cursor: Option<i64>) -> Result<Page> {
        let mut conn = self.reader()?;
        let mut rows = ready(entries::list(&mut *conn, filter, limit, cursor))?;
        if self.journal.has_pending() {
            rows = self.with_journaled(&conn, filter, cursor, rows)?;
        }
        Ok(entries::page(rows, limit))
    }
}

impl Store {}

/// Resolves an id or unique id prefix to `(seq, full id)`. An id still only
/// in the journal — acknowledged, but the database refuses writes (a full
/// disk) — is `-32005`, never "no entry": it exists, and will be stored.
pub(crate) fn resolve(
    conn: &Connection,
    journal: &Journal,
    field: &'static str,
    id: &str,
) -> Result<(i64, String)> {
    let id = id.trim().to_lowercase();
    let (lo, hi) = prefix_range(field, &id)?;
    let seqs: Vec<i64> = conn
        .prepare_cached("SELECT seq FROM entries WHERE seq BETWEEN ? AND ? ORDER BY seq LIMIT 2")?
        .query_map([lo, hi], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    match seqs.as_slice() {
        [] => match journal.find_range(lo, hi, 1).first() {
            Some((seq, _)) => Err(Error::Unavailable(format!(
                "entry {} is acknowledged and safe in the insert journal, but the database cannot take writes yet (is the disk full?), so it cannot be changed or used here until it is stored. Retry in a while; reading it by its full id works meanwhile.",
                id::encode(*seq)
            ))),
            None => Err(no_entry(field, &id)),
        },
        [seq] => Ok((*seq, id::encode(*seq))),
        // No ids listed: some may lie outside what the caller may read.
        _ => Err(ambiguous(field, &id)),
    }
}

pub(crate) fn load(conn: &Connection, seq: i64) -> Result<Entry> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {ENTRY_COLUMNS} FROM entries e WHERE e.seq = ?"
        ))?
        .query_row([seq], read_entry)?)
}

/// `entry.list` pages up to this long are read inline; longer ones (up to
/// 1,000 entries of up to 4,000 characters) on a blocking thread.
const INLINE_LIST_LIMIT: u32 = 100;

impl Entries for Sqlite {
    fn add(&self, entry: NewEntry) -> Fut<'_, Once<Added>> {
        let window = self.window(&entry.pad);
        self.inline(move |s| s.add(entry, window))
    }

    fn get<'a>(&'a self, id: &'a str) -> Fut<'a, Entry> {
        self.inline(move |s| s.get(id))
    }

    fn kept<'a>(&'a self, key: &'a Key, now: i64) -> Fut<'a, bool> {
        self.inline(move |s| ready(once::kept(&mut *s.reader()?, key, now)))
    }

    /// Up to two entries whose id starts with `id` among those in pads
    /// `visible` accepts (the journal's too): how a scoped caller's prefix
    /// resolves, so entries it may not read neither match nor make its
    /// prefix ambiguous.
    fn visible_matches<'a>(
        &'a self,
        id: &'a str,
        visible: Visible<'a>,
    ) -> Fut<'a, Vec<(String, String)>> {
        self.inline(move |s| {
            let id = id.trim().to_lowercase();
            let (lo, hi) = prefix_range("id", &id)?;
            let conn = s.reader()?;
            let mut stmt = conn.prepare_cached(
                "SELECT seq, pad FROM entries WHERE seq BETWEEN ? AND ? ORDER BY seq",
            )?;
            let mut rows = stmt.query([lo, hi])?;
            let mut found = Vec::new();
            while let Some(r) = rows.next()? {
                let pad: String = r.get(1)?;
                if visible(&pad) {
                    found.push((id::encode(r.get(0)?), pad));
                    if found.len() == 2 {
                        return Ok(found);
                    }
                }
            }
            // A batch just committed is still queued until that is recorded.
            for (seq, e) in s.journal.find_range(lo, hi, usize::MAX) {
                let id = id::encode(seq);
                if found.len() < 2 && visible(&e.pad) && !found.iter().any(|(f, _)| *f == id) {
                    found.push((id, e.pad));
                }
            }
            Ok(found)
        })
    }

    /// Applies `patch`; with `if_version`, only if the entry is still at that version.
    /// Returns the entry before and after.
    fn update<'a>(
        &'a self,
        id: &'a str,
        patch: Patch,
        if_version: Option<i64>,
        now: i64,
        by: &'a str,
    ) -> Fut<'a, (Entry, Entry)> {
        self.inline(move |s| {
            let mut w = s.writer();
            in_transaction(&mut w, |w| {
                ready(write::update(&mut s.tx(w), id, patch, if_version, now, by))
            })
        })
    }

    fn delete<'a>(
        &'a self,
        id: &'a str,
        if_version: Option<i64>,
        now: i64,
        by: &'a str,
    ) -> Fut<'a, (Entry, i64)> {
        self.inline(move |s| s.delete(id, if_version, now, by))
    }

    fn list<'a>(
        &'a self,
        filter: &'a EntryFilter,
        limit: u32,
        cursor: Option<i64>,
    ) -> Fut<'a, Page> {
        if limit <= INLINE_LIST_LIMIT {
            return self.inline(move |s| s.list(filter, limit, cursor));
        }
        let filter = filter.clone();
        self.blocking(move |s| s.list(&filter, limit, cursor))
    }

    /// An entry and every reply under it, at any depth, oldest first (at
    /// most `limit` replies).
    fn thread<'a>(&'a self, id: &'a str, limit: usize) -> Fut<'a, (Entry, Vec<Entry>)> {
        let id = id.to_string();
        self.blocking(move |s| {
            let id = &id;
            let mut conn = s.reader()?;
            let (seq, _) = resolve(&conn, &s.journal, "id", id)?;
            let root = load(&conn, seq)?;
            Ok((root, ready(entries::replies(&mut *conn, seq, limit))?))
        })
    }

    fn entries_by_id<'a>(&'a self, ids: &'a [i64]) -> Fut<'a, Vec<Option<Entry>>> {
        let ids = ids.to_vec();
        self.blocking(move |s| ready(entries::by_id(&mut *s.reader()?, &ids)))
    }

    fn pad_neighbours<'a>(&'a self, ids: &'a [i64]) -> Fut<'a, Vec<[Option<i64>; 4]>> {
        let ids = ids.to_vec();
        self.blocking(move |s| ready(entries::pad_neighbours(&mut *s.reader()?, &ids)))
    }

    fn inbox<'a>(&'a self, author: &'a str, peek: bool) -> Fut<'a, Inbox> {
        let author = author.to_string();
        self.blocking(move |s| {
            // The read connection goes back before the writer is taken.
            let (inbox, moved) = ready(inbox::inbox(&mut *s.reader()?, &author, peek))?;
            if let Some(q) = moved {
                let w = s.writer();
                w.conn.execute(&q.sql, params_from_iter(q.args()))?;
            }
            Ok(inbox)
        })
    }
}

//! The SQLite store behind the store contract (`storage::Storage`).
//!
//! The store itself is synchronous. Here each operation chooses where it
//! runs: point operations inline (a thread hop would cost more than the
//! work), scans and upkeep on a blocking thread so they never stall the
//! connections sharing the runtime. The engine takes a scan's turn before
//! calling; this only decides the thread.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use super::SqliteVectors;
use super::Store;
use crate::error::{Error, Result};
use crate::model::{Entry, Pad};
use crate::protocol::{Change, Skipped, Version};
use crate::semantic::{Semantic, VectorSource};
use crate::storage::{
    Added, Counts, DeliveryRow, EmbedGoal, EntryFilter, Finish, Fut, HistoryFilter, Inbox,
    NewEntry, PadEntries, PadRow, PadSweep, Page, Patch, Purge, ReportRow, Restore, Storage,
    TokenRow, Visible,
};

/// `entry.list` pages up to this long are read inline; longer ones (up to
/// 1,000 entries of up to 4,000 characters) on a blocking thread.
const INLINE_LIST_LIMIT: u32 = 100;

pub struct Sqlite {
    store: Arc<Store>,
    /// Pads with a rolling window (`max_entries`): the only pads whose
    /// writes need a second statement, so an add checks this map, not the
    /// database. Only this engine writes these files, so it stays true.
    windows: Mutex<HashMap<String, i64>>,
}

impl Sqlite {
    /// The contract's side of an opened store: starts applying its journal.
    pub fn new(store: Store) -> Result<Sqlite> {
        let store = Arc::new(store);
        store.start_applier();
        let windows = store.windows()?.into_iter().collect();
        Ok(Sqlite {
            store,
            windows: Mutex::new(windows),
        })
    }

    /// The store's files, for tests and benchmarks that look at them.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    fn window(&self, pad: &str) -> Option<i64> {
        let windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        if windows.is_empty() {
            None
        } else {
            windows.get(pad).copied()
        }
    }

    /// Runs `f` when the future is polled, on the polling thread.
    fn inline<'a, T: Send + 'a>(
        &'a self,
        f: impl FnOnce(&Store) -> Result<T> + Send + 'a,
    ) -> Fut<'a, T> {
        Box::pin(async move { f(&self.store) })
    }

    /// Runs `f` on a blocking thread: this one, when it runs a whole scan
    /// (`storage::run_on_scan_thread`), else one of the runtime's.
    fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> Result<T> + Send + 'static,
    ) -> Fut<'static, T> {
        let store = self.store.clone();
        if crate::storage::on_scan_thread() {
            return Box::pin(async move { f(&store) });
        }
        Box::pin(async move {
            tokio::task::spawn_blocking(move || f(&store))
                .await
                .map_err(|e| Error::Internal(format!("background task failed: {e}")))?
        })
    }
}

impl Storage for Sqlite {
    fn add(&self, entry: NewEntry) -> Fut<'_, Added> {
        let window = self.window(&entry.pad);
        self.inline(move |s| s.add(entry, window))
    }

    fn get<'a>(&'a self, id: &'a str) -> Fut<'a, Entry> {
        self.inline(move |s| s.get(id))
    }

    fn visible_matches<'a>(
        &'a self,
        id: &'a str,
        visible: Visible<'a>,
    ) -> Fut<'a, Vec<(String, String)>> {
        self.inline(move |s| s.visible_matches(id, visible))
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        patch: Patch,
        if_version: Option<i64>,
        now: i64,
        by: &'a str,
    ) -> Fut<'a, (Entry, Entry)> {
        self.inline(move |s| s.update(id, patch, if_version, now, by))
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

    fn thread<'a>(&'a self, id: &'a str, limit: usize) -> Fut<'a, (Entry, Vec<Entry>)> {
        let id = id.to_string();
        self.blocking(move |s| s.thread(&id, limit))
    }

    fn entries_by_id<'a>(&'a self, ids: &'a [i64]) -> Fut<'a, Vec<Option<Entry>>> {
        let ids = ids.to_vec();
        self.blocking(move |s| s.entries_by_id(&ids))
    }

    fn pad_neighbours<'a>(&'a self, ids: &'a [i64]) -> Fut<'a, Vec<[Option<i64>; 4]>> {
        let ids = ids.to_vec();
        self.blocking(move |s| s.pad_neighbours(&ids))
    }

    fn word_hits<'a>(
        &'a self,
        words: &'a [String],
        filter: &'a EntryFilter,
        limit: u32,
        prefix: bool,
        readable: Option<u64>,
    ) -> Fut<'a, Vec<(Entry, f64)>> {
        let (words, filter) = (words.to_vec(), filter.clone());
        self.blocking(move |s| s.word_hits(&words, &filter, limit, prefix, readable))
    }

    fn substring_hits<'a>(
        &'a self,
        words: &'a [String],
        filter: &'a EntryFilter,
        limit: u32,
    ) -> Fut<'a, Vec<(Entry, f64)>> {
        let (words, filter) = (words.to_vec(), filter.clone());
        self.blocking(move |s| s.substring_hits(&words, &filter, limit))
    }

    fn word_counts<'a>(
        &'a self,
        words: &'a [String],
        filter: &'a EntryFilter,
    ) -> Fut<'a, Vec<(String, u64)>> {
        self.inline(move |s| s.word_counts(words, filter))
    }

    fn any_word_hits<'a>(
        &'a self,
        words: &'a [(String, u64)],
        readable: Option<u64>,
        filter: &'a EntryFilter,
        limit: u32,
        newest_only: bool,
    ) -> Fut<'a, Vec<(Entry, f64)>> {
        let (words, filter) = (words.to_vec(), filter.clone());
        self.blocking(move |s| s.any_word_hits(&words, readable, &filter, limit, newest_only))
    }

    fn postings_budget(&self) -> u64 {
        crate::terms::POSTINGS_BUDGET
    }

    fn inbox<'a>(&'a self, author: &'a str, peek: bool) -> Fut<'a, Inbox> {
        let author = author.to_string();
        self.blocking(move |s| s.inbox(&author, peek))
    }

    fn pads(&self, include_archived: bool) -> Fut<'_, Vec<Pad>> {
        self.inline(move |s| s.pads(include_archived))
    }

    fn configure<'a>(
        &'a self,
        name: &'a str,
        ttl_seconds: Option<Option<i64>>,
        max_entries: Option<Option<i64>>,
        now: i64,
    ) -> Fut<'a, Pad> {
        self.inline(move |s| {
            let pad = s.configure(name, ttl_seconds, max_entries, now)?;
            let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
            match pad.max_entries {
                Some(m) => windows.insert(pad.name.clone(), m),
                None => windows.remove(&pad.name),
            };
            Ok(pad)
        })
    }

    fn touch<'a>(&'a self, name: &'a str, now: i64) -> Fut<'a, Pad> {
        self.inline(move |s| s.touch(name, now))
    }

    fn clear<'a>(
        &'a self,
        name: &'a str,
        keep_pinned: bool,
        now: i64,
        by: &'a str,
    ) -> Fut<'a, (BTreeMap<String, usize>, i64)> {
        let (name, by) = (name.to_string(), by.to_string());
        self.blocking(move |s| s.clear(&name, keep_pinned, now, &by))
    }

    fn pad_with_entries<'a>(
        &'a self,
        name: &'a str,
        max_bytes: usize,
    ) -> Fut<'a, (Pad, PadEntries)> {
        let name = name.to_string();
        self.blocking(move |s| s.pad_with_entries(&name, max_bytes))
    }

    fn tags<'a>(&'a self, filter: &'a EntryFilter) -> Fut<'a, Vec<(String, i64)>> {
        let filter = filter.clone();
        self.blocking(move |s| s.tags(&filter))
    }

    fn claim<'a>(
        &'a self,
        pad: &'a str,
        agent: &'a str,
        lease_ms: i64,
        now: i64,
    ) -> Fut<'a, Option<(Entry, Entry)>> {
        self.inline(move |s| s.claim(pad, agent, lease_ms, now))
    }

    fn heartbeat<'a>(
        &'a self,
        id: &'a str,
        agent: Option<&'a str>,
        resume: Option<String>,
        lease_ms: Option<i64>,
        now: i64,
    ) -> Fut<'a, (Entry, Entry)> {
        self.inline(move |s| s.heartbeat(id, agent, resume, lease_ms, now))
    }

    fn finish<'a>(
        &'a self,
        id: &'a str,
        agent: Option<&'a str>,
        how: Finish,
        now: i64,
    ) -> Fut<'a, (Entry, Entry)> {
        self.inline(move |s| s.finish(id, agent, how, now))
    }

    fn release_expired(&self, now: i64) -> Fut<'_, Vec<(Entry, Entry)>> {
        self.blocking(move |s| s.release_expired(now))
    }

    fn due_reminders(&self, now: i64) -> Fut<'_, Vec<Entry>> {
        self.blocking(move |s| match s.next_reminder()? {
            Some(at) if at <= now => s.take_due_reminders(now),
            _ => Ok(Vec::new()),
        })
    }

    fn plan_entries<'a>(&'a self, pad: &'a str) -> Fut<'a, Vec<(Entry, Vec<String>)>> {
        let pad = pad.to_string();
        self.blocking(move |s| s.plan_entries(&pad))
    }

    fn report_rows<'a>(&'a self, filter: &'a EntryFilter) -> Fut<'a, Vec<ReportRow>> {
        let filter = filter.clone();
        self.blocking(move |s| s.report_rows(&filter))
    }

    fn kept_matches<'a>(
        &'a self,
        id: &'a str,
        visible: Visible<'a>,
    ) -> Fut<'a, Vec<(i64, String)>> {
        self.inline(move |s| s.kept_matches(id, visible))
    }

    fn history(&self, seq: i64) -> Fut<'_, (Option<Entry>, Vec<Version>)> {
        self.inline(move |s| s.history(seq))
    }

    fn trash<'a>(
        &'a self,
        filter: &'a HistoryFilter,
        limit: u32,
        cursor: Option<i64>,
    ) -> Fut<'a, (Vec<Version>, Option<i64>)> {
        self.inline(move |s| s.trash(filter, limit, cursor))
    }

    fn restore<'a>(
        &'a self,
        which: Restore,
        by: &'a str,
        now: i64,
        writable: Visible<'a>,
    ) -> Fut<'a, (Vec<Entry>, Vec<Skipped>)> {
        Box::pin(async move {
            let out = self.store.restore(which, by, now, writable)?;
            // Entries come back with their old ids, below the text index's
            // watermark: index them now so a search finds them at once.
            if !out.0.is_empty() {
                self.index_text().await?;
            }
            Ok(out)
        })
    }

    fn change(&self, batch: i64) -> Fut<'_, Vec<Version>> {
        self.inline(move |s| s.change(batch))
    }

    fn purge<'a>(&'a self, which: &'a Purge) -> Fut<'a, usize> {
        self.inline(move |s| s.purge(which))
    }

    fn changes<'a>(
        &'a self,
        filter: &'a HistoryFilter,
        limit: usize,
        created: bool,
    ) -> Fut<'a, (Vec<Change>, bool)> {
        self.inline(move |s| s.changes(filter, limit, created))
    }

    fn prune_history(&self, cutoff: i64, max_rows: i64) -> Fut<'_, usize> {
        self.blocking(move |s| s.prune_history(cutoff, max_rows))
    }

    fn add_token<'a>(&'a self, token: &'a TokenRow) -> Fut<'a, ()> {
        self.inline(move |s| s.add_token(token))
    }

    fn tokens(&self) -> Fut<'_, Vec<TokenRow>> {
        self.inline(|s| s.tokens())
    }

    fn revoke_token<'a>(&'a self, name: &'a str) -> Fut<'a, bool> {
        self.inline(move |s| s.revoke_token(name))
    }

    fn deliveries_waiting<'a>(&'a self, agents: &'a [String]) -> Fut<'a, Vec<DeliveryRow>> {
        self.inline(move |s| s.deliveries_waiting(agents))
    }

    fn conversations(&self) -> Fut<'_, Vec<DeliveryRow>> {
        self.inline(|s| s.conversations())
    }

    fn save_conversation<'a>(
        &'a self,
        row: &'a DeliveryRow,
        taken: Option<&'a str>,
        now: i64,
    ) -> Fut<'a, ()> {
        self.inline(move |s| s.save_conversation(row, taken, now))
    }

    fn drop_delivery<'a>(&'a self, row: &'a DeliveryRow) -> Fut<'a, ()> {
        self.inline(move |s| s.drop_delivery(row))
    }

    fn drop_agent_deliveries<'a>(&'a self, agent: &'a str) -> Fut<'a, usize> {
        self.inline(move |s| s.drop_agent_deliveries(agent))
    }

    fn deliveries<'a>(
        &'a self,
        pad: Option<&'a str>,
        entry: Option<&'a str>,
    ) -> Fut<'a, Vec<DeliveryRow>> {
        self.inline(move |s| s.deliveries(pad, entry))
    }

    fn sweep(&self, now: i64, retention_ms: i64) -> Fut<'_, PadSweep> {
        self.blocking(move |s| {
            let done = s.sweep(now, retention_ms)?;
            if done.purged_entries > 0 || done.purged_pads > 0 {
                // The text index drops the purged entries before the change
                // log that tells it of them is pruned.
                s.catch_up_text()?;
                s.prune_changes()?;
            }
            Ok(done)
        })
    }

    fn index_text(&self) -> Fut<'_, ()> {
        self.blocking(|s| s.catch_up_text())
    }

    fn write_epoch(&self) -> Option<u64> {
        Some(self.store.write_epoch())
    }

    fn checkpoint(&self) -> Fut<'_, ()> {
        self.blocking(|s| s.checkpoint_passive().map(drop))
    }

    fn close(&self) -> Fut<'_, ()> {
        self.blocking(|s| {
            s.checkpoint();
            Ok(())
        })
    }

    fn counts(&self) -> Fut<'_, Counts> {
        self.blocking(|s| s.counts())
    }

    fn pads_by(&self, stalest: bool, limit: usize) -> Fut<'_, Vec<PadRow>> {
        self.blocking(move |s| s.pads_by(stalest, limit))
    }

    fn content_size(&self) -> Fut<'_, (i64, f64)> {
        self.blocking(|s| s.content_size())
    }

    fn writes_per_minute<'a>(
        &'a self,
        now: i64,
        minutes: usize,
        keep: Visible<'a>,
    ) -> Fut<'a, Vec<u64>> {
        self.inline(move |s| s.writes_per_minute(now, minutes, keep))
    }

    fn recent_writes_by_pad(&self, since: i64, limit: usize) -> Fut<'_, Vec<(String, i64)>> {
        self.blocking(move |s| s.recent_writes_by_pad(since, limit))
    }

    fn queues(&self) -> Fut<'_, (i64, i64)> {
        // The journal's first: reading the index queue applies the journal.
        self.inline(|s| {
            let journal = s.journal_queue();
            Ok((journal, s.index_queue()?))
        })
    }

    fn embed_queue(&self) -> Fut<'_, i64> {
        self.blocking(|s| s.embed_queue())
    }

    fn disk_bytes(&self) -> Fut<'_, u64> {
        self.inline(|s| Ok(s.disk_bytes()))
    }

    fn disk_usage(&self) -> Fut<'_, Vec<(&'static str, u64)>> {
        self.inline(|s| Ok(s.disk_usage()))
    }

    fn vectors(&self) -> Result<Arc<dyn VectorSource>> {
        Ok(Arc::new(SqliteVectors(self.store.clone())))
    }

    fn live_entries(&self) -> Fut<'_, usize> {
        self.inline(|s| s.live_entries())
    }

    fn count_matching(&self, filter: EntryFilter, cap: usize) -> Fut<'_, usize> {
        self.blocking(move |s| s.count_matching(&filter, cap))
    }

    fn any_archived(&self) -> Fut<'_, bool> {
        self.inline(|s| s.any_archived())
    }

    fn nearest_exact(
        &self,
        query: Arc<[f32]>,
        filter: EntryFilter,
        k: usize,
    ) -> Fut<'_, Vec<(i64, f32)>> {
        self.blocking(move |s| s.nearest_exact(&query, &filter, k))
    }

    fn similarities(&self, query: Arc<[f32]>, ids: Vec<i64>) -> Fut<'_, Vec<(i64, f32)>> {
        self.blocking(move |s| s.similarities(&query, &ids))
    }

    /// Each candidate is checked in process as the index walks them best
    /// first (a point lookup, remembered), so a broad filter checks few.
    fn index_candidates(
        &self,
        index: Arc<Semantic>,
        query: Arc<[f32]>,
        filter: Option<EntryFilter>,
        want: usize,
    ) -> Fut<'_, Option<Vec<i64>>> {
        self.blocking(move |s| match filter {
            None => Ok(index.candidates(&query, want, None)),
            Some(filter) => s.with_filter_check(&filter, |passes| {
                index.candidates(&query, want, Some(passes))
            }),
        })
    }

    /// The last entry and edit: this engine's own worker embeds them and its
    /// index's mark reaches them together.
    fn embed_goal(&self) -> Fut<'_, EmbedGoal> {
        self.blocking(|s| {
            Ok(EmbedGoal {
                upto: s.embed_target()?,
                backlog: s.embed_queue()?,
            })
        })
    }

    fn embedded_mark(&self, goal: EmbedGoal) -> Fut<'_, Option<(i64, i64)>> {
        Box::pin(async move { Ok(Some(goal.upto)) })
    }

    fn embed_left(&self, _goal: EmbedGoal) -> Fut<'_, u64> {
        self.blocking(|s| Ok(s.embed_queue()?.max(0) as u64))
    }

    fn scans_block(&self) -> bool {
        true
    }
}

//! PostgreSQL behind the store contract (`storage::Storage`): every
//! operation is the store's own async one, awaited on the engine's runtime.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{PgStore, PgVectors};
use crate::error::{Error, Result};
use crate::model::{Entry, Pad};
use crate::protocol::{Change, Skipped, Version};
use crate::semantic::{Semantic, VectorSource};
use crate::storage::{
    Added, Counts, DeliveryRow, EmbedGoal, EntryFilter, Finish, Fut, HistoryFilter, Inbox,
    NewEntry, PadEntries, PadRow, PadSweep, Page, Patch, Purge, ReportRow, Restore, Storage,
    TokenRow, Visible,
};

impl Storage for PgStore {
    fn add(&self, entry: NewEntry) -> Fut<'_, Added> {
        Box::pin(PgStore::add(self, entry))
    }

    fn get<'a>(&'a self, id: &'a str) -> Fut<'a, Entry> {
        Box::pin(PgStore::get(self, id))
    }

    fn visible_matches<'a>(
        &'a self,
        id: &'a str,
        visible: Visible<'a>,
    ) -> Fut<'a, Vec<(String, String)>> {
        Box::pin(PgStore::visible_matches(self, id, visible))
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        patch: Patch,
        if_version: Option<i64>,
        now: i64,
        by: &'a str,
    ) -> Fut<'a, (Entry, Entry)> {
        Box::pin(PgStore::update(self, id, patch, if_version, now, by))
    }

    fn delete<'a>(
        &'a self,
        id: &'a str,
        if_version: Option<i64>,
        now: i64,
        by: &'a str,
    ) -> Fut<'a, (Entry, i64)> {
        Box::pin(PgStore::delete(self, id, if_version, now, by))
    }

    fn list<'a>(
        &'a self,
        filter: &'a EntryFilter,
        limit: u32,
        cursor: Option<i64>,
    ) -> Fut<'a, Page> {
        Box::pin(PgStore::list(self, filter, limit, cursor))
    }

    fn thread<'a>(&'a self, id: &'a str, limit: usize) -> Fut<'a, (Entry, Vec<Entry>)> {
        Box::pin(PgStore::thread(self, id, limit))
    }

    fn entries_by_id<'a>(&'a self, ids: &'a [i64]) -> Fut<'a, Vec<Option<Entry>>> {
        Box::pin(PgStore::entries_by_id(self, ids))
    }

    fn pad_neighbours<'a>(&'a self, ids: &'a [i64]) -> Fut<'a, Vec<[Option<i64>; 4]>> {
        Box::pin(PgStore::pad_neighbours(self, ids))
    }

    fn word_hits<'a>(
        &'a self,
        words: &'a [String],
        filter: &'a EntryFilter,
        limit: u32,
        prefix: bool,
        // ts_rank weighs no word by how common it is.
        _readable: Option<u64>,
    ) -> Fut<'a, Vec<(Entry, f64)>> {
        Box::pin(PgStore::word_hits(self, words, filter, limit, prefix))
    }

    fn substring_hits<'a>(
        &'a self,
        words: &'a [String],
        filter: &'a EntryFilter,
        limit: u32,
    ) -> Fut<'a, Vec<(Entry, f64)>> {
        Box::pin(PgStore::substring_hits(self, words, filter, limit))
    }

    fn word_counts<'a>(
        &'a self,
        words: &'a [String],
        filter: &'a EntryFilter,
    ) -> Fut<'a, Vec<(String, u64)>> {
        Box::pin(PgStore::word_counts(self, words, filter))
    }

    fn any_word_hits<'a>(
        &'a self,
        words: &'a [(String, u64)],
        readable: Option<u64>,
        filter: &'a EntryFilter,
        limit: u32,
        newest_only: bool,
    ) -> Fut<'a, Vec<(Entry, f64)>> {
        Box::pin(PgStore::any_word_hits(
            self,
            words,
            readable,
            filter,
            limit,
            newest_only,
        ))
    }

    fn postings_budget(&self) -> u64 {
        crate::terms::POSTINGS_BUDGET_PG
    }

    fn inbox<'a>(&'a self, author: &'a str, peek: bool) -> Fut<'a, Inbox> {
        Box::pin(PgStore::inbox(self, author, peek))
    }

    fn pads(&self, include_archived: bool) -> Fut<'_, Vec<Pad>> {
        Box::pin(PgStore::pads(self, include_archived))
    }

    fn configure<'a>(
        &'a self,
        name: &'a str,
        ttl_seconds: Option<Option<i64>>,
        max_entries: Option<Option<i64>>,
        now: i64,
    ) -> Fut<'a, Pad> {
        Box::pin(PgStore::configure(
            self,
            name,
            ttl_seconds,
            max_entries,
            now,
        ))
    }

    fn touch<'a>(&'a self, name: &'a str, now: i64) -> Fut<'a, Pad> {
        Box::pin(PgStore::touch(self, name, now))
    }

    fn clear<'a>(
        &'a self,
        name: &'a str,
        keep_pinned: bool,
        now: i64,
        by: &'a str,
    ) -> Fut<'a, (BTreeMap<String, usize>, i64)> {
        Box::pin(PgStore::clear(self, name, keep_pinned, now, by))
    }

    fn pad_with_entries<'a>(
        &'a self,
        name: &'a str,
        max_bytes: usize,
    ) -> Fut<'a, (Pad, PadEntries)> {
        Box::pin(PgStore::pad_with_entries(self, name, max_bytes))
    }

    fn tags<'a>(&'a self, filter: &'a EntryFilter) -> Fut<'a, Vec<(String, i64)>> {
        Box::pin(PgStore::tags(self, filter))
    }

    fn claim<'a>(
        &'a self,
        pad: &'a str,
        agent: &'a str,
        lease_ms: i64,
        now: i64,
    ) -> Fut<'a, Option<(Entry, Entry)>> {
        Box::pin(PgStore::claim(self, pad, agent, lease_ms, now))
    }

    fn heartbeat<'a>(
        &'a self,
        id: &'a str,
        agent: Option<&'a str>,
        resume: Option<String>,
        lease_ms: Option<i64>,
        now: i64,
    ) -> Fut<'a, (Entry, Entry)> {
        Box::pin(PgStore::heartbeat(self, id, agent, resume, lease_ms, now))
    }

    fn finish<'a>(
        &'a self,
        id: &'a str,
        agent: Option<&'a str>,
        how: Finish,
        now: i64,
    ) -> Fut<'a, (Entry, Entry)> {
        Box::pin(PgStore::finish(self, id, agent, how, now))
    }

    fn release_expired(&self, now: i64) -> Fut<'_, Vec<(Entry, Entry)>> {
        Box::pin(PgStore::release_expired(self, now))
    }

    fn due_reminders(&self, now: i64) -> Fut<'_, Vec<Entry>> {
        Box::pin(async move {
            match self.next_reminder().await? {
                Some(at) if at <= now => self.take_due_reminders(now).await,
                _ => Ok(Vec::new()),
            }
        })
    }

    fn plan_entries<'a>(&'a self, pad: &'a str) -> Fut<'a, Vec<(Entry, Vec<String>)>> {
        Box::pin(PgStore::plan_entries(self, pad))
    }

    fn report_rows<'a>(&'a self, filter: &'a EntryFilter) -> Fut<'a, Vec<ReportRow>> {
        Box::pin(PgStore::report_rows(self, filter))
    }

    fn kept_matches<'a>(
        &'a self,
        id: &'a str,
        visible: Visible<'a>,
    ) -> Fut<'a, Vec<(i64, String)>> {
        Box::pin(PgStore::kept_matches(self, id, visible))
    }

    fn history(&self, seq: i64) -> Fut<'_, (Option<Entry>, Vec<Version>)> {
        Box::pin(PgStore::history(self, seq))
    }

    fn trash<'a>(
        &'a self,
        filter: &'a HistoryFilter,
        limit: u32,
        cursor: Option<i64>,
    ) -> Fut<'a, (Vec<Version>, Option<i64>)> {
        Box::pin(PgStore::trash(self, filter, limit, cursor))
    }

    fn restore<'a>(
        &'a self,
        which: Restore,
        by: &'a str,
        now: i64,
        writable: Visible<'a>,
    ) -> Fut<'a, (Vec<Entry>, Vec<Skipped>)> {
        Box::pin(PgStore::restore(self, which, by, now, writable))
    }

    fn change(&self, batch: i64) -> Fut<'_, Vec<Version>> {
        Box::pin(PgStore::change(self, batch))
    }

    fn purge<'a>(&'a self, which: &'a Purge) -> Fut<'a, usize> {
        Box::pin(PgStore::purge(self, which))
    }

    fn changes<'a>(
        &'a self,
        filter: &'a HistoryFilter,
        limit: usize,
        created: bool,
    ) -> Fut<'a, (Vec<Change>, bool)> {
        Box::pin(PgStore::changes(self, filter, limit, created))
    }

    fn prune_history(&self, cutoff: i64, max_rows: i64) -> Fut<'_, usize> {
        Box::pin(PgStore::prune_history(self, cutoff, max_rows))
    }

    fn add_token<'a>(&'a self, token: &'a TokenRow) -> Fut<'a, ()> {
        Box::pin(PgStore::add_token(self, token))
    }

    fn tokens(&self) -> Fut<'_, Vec<TokenRow>> {
        Box::pin(PgStore::tokens(self))
    }

    fn revoke_token<'a>(&'a self, name: &'a str) -> Fut<'a, bool> {
        Box::pin(PgStore::revoke_token(self, name))
    }

    fn deliveries_waiting<'a>(&'a self, agents: &'a [String]) -> Fut<'a, Vec<DeliveryRow>> {
        Box::pin(PgStore::deliveries_waiting(self, agents))
    }

    fn conversations(&self) -> Fut<'_, Vec<DeliveryRow>> {
        Box::pin(PgStore::conversations(self))
    }

    fn save_conversation<'a>(
        &'a self,
        row: &'a DeliveryRow,
        taken: Option<&'a str>,
        now: i64,
    ) -> Fut<'a, ()> {
        Box::pin(PgStore::save_conversation(self, row, taken, now))
    }

    fn drop_delivery<'a>(&'a self, row: &'a DeliveryRow) -> Fut<'a, ()> {
        Box::pin(PgStore::drop_delivery(self, row))
    }

    fn drop_agent_deliveries<'a>(&'a self, agent: &'a str) -> Fut<'a, usize> {
        Box::pin(PgStore::drop_agent_deliveries(self, agent))
    }

    fn deliveries<'a>(
        &'a self,
        pad: Option<&'a str>,
        entry: Option<&'a str>,
    ) -> Fut<'a, Vec<DeliveryRow>> {
        Box::pin(PgStore::deliveries(self, pad, entry))
    }

    fn sweep(&self, now: i64, retention_ms: i64) -> Fut<'_, PadSweep> {
        Box::pin(PgStore::sweep(self, now, retention_ms))
    }

    fn index_text(&self) -> Fut<'_, ()> {
        Box::pin(async { Ok(()) })
    }

    fn write_epoch(&self) -> Option<u64> {
        None
    }

    fn checkpoint(&self) -> Fut<'_, ()> {
        Box::pin(PgStore::analyze_if_loaded(self))
    }

    fn close(&self) -> Fut<'_, ()> {
        Box::pin(async move {
            PgStore::close(self).await;
            Ok(())
        })
    }

    fn counts(&self) -> Fut<'_, Counts> {
        Box::pin(PgStore::counts(self))
    }

    fn pads_by(&self, stalest: bool, limit: usize) -> Fut<'_, Vec<PadRow>> {
        Box::pin(PgStore::pads_by(self, stalest, limit))
    }

    fn content_size(&self) -> Fut<'_, (i64, f64)> {
        Box::pin(PgStore::content_size(self))
    }

    fn writes_per_minute<'a>(
        &'a self,
        now: i64,
        minutes: usize,
        keep: Visible<'a>,
    ) -> Fut<'a, Vec<u64>> {
        Box::pin(PgStore::writes_per_minute(self, now, minutes, keep))
    }

    fn recent_writes_by_pad(&self, since: i64, limit: usize) -> Fut<'_, Vec<(String, i64)>> {
        Box::pin(PgStore::recent_writes_by_pad(self, since, limit))
    }

    fn queues(&self) -> Fut<'_, (i64, i64)> {
        Box::pin(async { Ok((0, 0)) })
    }

    fn embed_queue(&self) -> Fut<'_, i64> {
        Box::pin(async move { Ok(self.embed_backlog().await?.1) })
    }

    fn disk_bytes(&self) -> Fut<'_, u64> {
        Box::pin(PgStore::disk_bytes(self))
    }

    fn disk_usage(&self) -> Fut<'_, Vec<(&'static str, u64)>> {
        Box::pin(async move { Ok(vec![("postgresql", PgStore::disk_bytes(self).await?)]) })
    }

    fn vectors(&self) -> Result<Arc<dyn VectorSource>> {
        Ok(Arc::new(PgVectors::new(self)?))
    }

    fn live_entries(&self) -> Fut<'_, usize> {
        Box::pin(PgStore::live_entries(self))
    }

    fn count_matching(&self, filter: EntryFilter, cap: usize) -> Fut<'_, usize> {
        Box::pin(async move { PgStore::count_matching(self, &filter, cap).await })
    }

    fn any_archived(&self) -> Fut<'_, bool> {
        Box::pin(PgStore::any_archived(self))
    }

    fn nearest_exact(
        &self,
        query: Arc<[f32]>,
        filter: EntryFilter,
        k: usize,
    ) -> Fut<'_, Vec<(i64, f32)>> {
        Box::pin(async move { PgStore::nearest_exact(self, &query, &filter, k).await })
    }

    fn similarities(&self, query: Arc<[f32]>, ids: Vec<i64>) -> Fut<'_, Vec<(i64, f32)>> {
        Box::pin(async move { PgStore::similarities(self, &query, &ids).await })
    }

    /// A filter is checked on a batch of candidates in one query, asking the
    /// index for four times more until enough pass (or it has no more).
    fn index_candidates(
        &self,
        index: Arc<Semantic>,
        query: Arc<[f32]>,
        filter: Option<EntryFilter>,
        want: usize,
    ) -> Fut<'_, Option<Vec<i64>>> {
        Box::pin(async move {
            let mut asked = want;
            loop {
                let (i, q) = (index.clone(), query.clone());
                let checked = filter.is_some();
                let found = tokio::task::spawn_blocking(move || {
                    if checked {
                        i.candidates_to_filter(&q, asked)
                    } else {
                        i.candidates(&q, asked, None).map(|c| (c, 0))
                    }
                })
                .await
                .map_err(|e| Error::Internal(format!("semantic search task failed: {e}")))?;
                let Some((ids, len)) = found else {
                    return Ok(None);
                };
                let Some(filter) = &filter else {
                    return Ok(Some(ids));
                };
                let pass = self.passing(filter, &ids).await?;
                let kept: Vec<i64> = ids.into_iter().filter(|id| pass.contains(id)).collect();
                if kept.len() >= want || asked >= len {
                    return Ok(Some(kept));
                }
                asked = asked.saturating_mul(4).min(len);
            }
        })
    }

    /// The newest queued entry, and the vectors' newest row when read:
    /// any engine of the team may embed what is queued.
    fn embed_goal(&self) -> Fut<'_, EmbedGoal> {
        Box::pin(async move {
            let (queued, backlog, n) = self.embed_backlog().await?;
            Ok(EmbedGoal {
                upto: (queued.unwrap_or(0), n),
                backlog,
            })
        })
    }

    /// Once nothing up to the goal waits in the queue, the index must reach
    /// the vectors' newest row (which holds them).
    fn embedded_mark(&self, goal: EmbedGoal) -> Fut<'_, Option<(i64, i64)>> {
        Box::pin(async move {
            let n = match goal.upto {
                (0, n) => n,
                (queued, _) if PgStore::embed_left(self, queued).await? == 0 => {
                    self.vectors_last_n().await?
                }
                _ => return Ok(None),
            };
            Ok(Some((n, i64::MIN)))
        })
    }

    fn embed_left(&self, goal: EmbedGoal) -> Fut<'_, u64> {
        Box::pin(async move {
            Ok(match goal.upto.0 {
                0 => 0,
                queued => PgStore::embed_left(self, queued).await?.max(0) as u64,
            })
        })
    }

    fn scans_block(&self) -> bool {
        false
    }
}

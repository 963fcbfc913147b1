//! What has been happening: write rates, busy and idle pads, tags in use,
//! sizes. Read by `stats` (the activity view) and the metrics endpoint.
//!
//! Time windows are rowid ranges (ids start with their write time, see
//! `crate::id`), so "the last hour" reads only the last hour's rows.

use super::sqlite::ready;
use super::Sqlite;
use super::Store;
use crate::storage::activity;
use crate::storage::Counts;
use crate::storage::Figures;
use crate::storage::Fut;
use crate::storage::PadRow;
use crate::storage::Visible;

impl Store {
    /// Bytes on disk per file (each with its WAL): the store, the text
    /// index, the vectors and the vector index.
    pub fn disk_usage(&self) -> Vec<(&'static str, u64)> {
        let mut out = vec![
            ("pad.db", super::derived::disk_bytes(&self.db_path)),
            ("search.db", self.text.disk_bytes()),
        ];
        if let Some(v) = &self.vectors {
            out.push(("vectors.db", v.disk_bytes()));
            if let Some(dir) = self.db_path.parent() {
                let index = dir.join(crate::semantic::INDEX_FILE);
                out.push((
                    crate::semantic::INDEX_FILE,
                    std::fs::metadata(index).map_or(0, |m| m.len()),
                ));
            }
        }
        out
    }
}

impl Figures for Sqlite {
    /// Counts for `stats`.
    fn counts(&self) -> Fut<'_, Counts> {
        self.blocking(|s| {
            let conn = s.reader()?;
            let (entries, live_pads, archived_pads) = conn.query_row(
                "SELECT (SELECT coalesce(sum(entries), 0) FROM pads), \
                        (SELECT count(*) FROM pads WHERE archived_at IS NULL), \
                        (SELECT count(*) FROM pads WHERE archived_at IS NOT NULL)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?;
            let tags = conn.query_row("SELECT count(DISTINCT tag) FROM entry_tags", [], |r| {
                r.get(0)
            })?;
            Ok(Counts {
                entries,
                live_pads,
                archived_pads,
                tags,
            })
        })
    }

    fn pads_by(&self, stalest: bool, limit: usize) -> Fut<'_, Vec<PadRow>> {
        self.blocking(move |s| ready(activity::pads_by(&mut *s.reader()?, stalest, limit)))
    }

    /// Entries on live pads and their mean content size in bytes.
    fn content_size(&self) -> Fut<'_, (i64, f64)> {
        self.blocking(move |s| {
            let conn = s.reader()?;
            Ok(conn.query_row(
                "SELECT count(*), coalesce(avg(length(CAST(e.content AS BLOB))), 0) \
                 FROM entries e JOIN pads p ON p.name = e.pad WHERE p.archived_at IS NULL",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?)
        })
    }

    fn writes_per_minute<'a>(
        &'a self,
        now: i64,
        minutes: usize,
        keep: Visible<'a>,
    ) -> Fut<'a, Vec<u64>> {
        self.inline(move |s| {
            ready(activity::writes_per_minute(
                &mut *s.reader()?,
                now,
                minutes,
                keep,
            ))
        })
    }

    fn recent_writes_by_pad(&self, since: i64, limit: usize) -> Fut<'_, Vec<(String, i64)>> {
        self.blocking(move |s| {
            ready(activity::recent_writes_by_pad(
                &mut *s.reader()?,
                since,
                limit,
            ))
        })
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
}

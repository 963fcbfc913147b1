//! Entry reads and writes.

use sqlx::sqlite::SqliteConnection;
use sqlx::{Connection, QueryBuilder, Sqlite};

use super::rows::{EntryRow, ENTRY_COLUMNS};
use super::Store;
use crate::error::{Error, Result};
use crate::id::{is_id_prefix, ID_LEN};
use crate::model::{Category, Entry, Kind, Status};

/// A validated entry ready to insert.
#[derive(Debug)]
pub struct NewEntry {
    pub id: String,
    pub pad: String,
    pub author: String,
    pub kind: Kind,
    pub content: String,
    pub tags: Vec<String>,
    pub status: Option<Status>,
    pub assignee: Option<String>,
    pub resume: Option<String>,
    pub category: Option<Category>,
    pub confidence: Option<f64>,
    pub depends_on: Vec<String>,
    pub remind_at: Option<i64>,
    pub pinned: bool,
    pub meta: Option<String>,
    pub now: i64,
}

/// A validated change to an entry. `None` leaves a field as it is; for nullable
/// fields `Some(None)` clears it.
#[derive(Debug, Default)]
pub struct Patch {
    pub content: Option<String>,
    pub tags: Option<Vec<String>>,
    pub kind: Option<Kind>,
    pub status: Option<Option<Status>>,
    pub assignee: Option<Option<String>>,
    pub resume: Option<Option<String>>,
    pub category: Option<Option<Category>>,
    pub confidence: Option<Option<f64>>,
    pub pinned: Option<bool>,
    pub depends_on: Option<Vec<String>>,
    pub remind_at: Option<Option<i64>>,
    pub meta: Option<Option<String>>,
}

/// Filters shared by `entry.list` and `search`.
#[derive(Debug, Default, Clone)]
pub struct EntryFilter {
    pub pad: Option<String>,
    pub tags: Vec<String>,
    pub author: Option<String>,
    pub kind: Option<Kind>,
    pub status: Option<Status>,
    pub since: Option<i64>,
}

impl EntryFilter {
    /// Appends ` AND …` clauses for this filter; `e` is entries, `p` its pad.
    pub(crate) fn push_sql<'a>(&'a self, q: &mut QueryBuilder<'a, Sqlite>) {
        q.push(" AND p.archived_at IS NULL");
        if let Some(pad) = &self.pad {
            q.push(" AND e.pad = ").push_bind(pad);
        }
        if let Some(a) = &self.author {
            q.push(" AND e.author = ").push_bind(a);
        }
        if let Some(k) = self.kind {
            q.push(" AND e.kind = ").push_bind(k.as_str());
        }
        if let Some(s) = self.status {
            q.push(" AND e.status = ").push_bind(s.as_str());
        }
        if let Some(t) = self.since {
            q.push(" AND e.created_at >= ").push_bind(t);
        }
        for tag in &self.tags {
            q.push(" AND e.seq IN (SELECT seq FROM entry_tags WHERE tag = ")
                .push_bind(tag)
                .push(")");
        }
    }
}

pub struct Page {
    pub entries: Vec<Entry>,
    pub next_cursor: Option<String>,
}

impl Store {
    /// Inserts an entry; returns it and whatever the pad's rolling window pushed out.
    pub async fn add(&self, e: NewEntry, max_entries: Option<i64>) -> Result<(Entry, Vec<Entry>)> {
        let mut w = self.writer().await;
        let mut depends = Vec::with_capacity(e.depends_on.len());
        for d in &e.depends_on {
            depends.push(resolve(&mut w.conn, "depends_on", d).await?.1);
        }
        let rev = w.take_rev();
        let tags = serde_json::to_string(&e.tags).expect("strings serialize");
        let deps = serde_json::to_string(&depends).expect("strings serialize");
        let insert = sqlx::query(
            "INSERT INTO entries (id, pad, author, kind, content, tags, status, assignee, resume, \
             category, confidence, depends_on, remind_at, pinned, meta, created_at, updated_at, rev) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&e.id)
        .bind(&e.pad)
        .bind(&e.author)
        .bind(e.kind.as_str())
        .bind(&e.content)
        .bind(&tags)
        .bind(e.status.map(Status::as_str))
        .bind(&e.assignee)
        .bind(&e.resume)
        .bind(e.category.map(Category::as_str))
        .bind(e.confidence)
        .bind(&deps)
        .bind(e.remind_at)
        .bind(e.pinned)
        .bind(&e.meta)
        .bind(e.now)
        .bind(e.now)
        .bind(rev);

        let rolled = match max_entries {
            None => {
                insert.execute(&mut w.conn).await?;
                Vec::new()
            }
            Some(max) => {
                let mut tx = w.conn.begin().await?;
                insert.execute(&mut *tx).await?;
                // RETURNING cannot name a table alias: strip the `e.` prefixes.
                let rolled = sqlx::query_as::<_, EntryRow>(&format!(
                    "DELETE FROM entries WHERE seq IN (SELECT seq FROM entries \
                     WHERE pad = ?1 AND pinned = 0 ORDER BY seq \
                     LIMIT max(0, (SELECT entries FROM pads WHERE name = ?1) - ?2)) \
                     RETURNING {}",
                    ENTRY_COLUMNS.replace("e.", "")
                ))
                .bind(&e.pad)
                .bind(max)
                .fetch_all(&mut *tx)
                .await?;
                tx.commit().await?;
                rolled.into_iter().map(EntryRow::into_entry).collect()
            }
        };
        self.publish(rev);
        drop(w);

        let entry = Entry {
            id: e.id,
            pad: e.pad,
            author: e.author,
            kind: e.kind,
            content: e.content,
            tags: e.tags,
            status: e.status,
            assignee: e.assignee,
            resume: e.resume,
            lease_until: None,
            category: e.category,
            confidence: e.confidence,
            depends_on: depends,
            remind_at: e.remind_at.map(crate::model::fmt_time),
            pinned: e.pinned,
            meta: e.meta.as_deref().and_then(|m| serde_json::from_str(m).ok()),
            created_at: crate::model::fmt_time(e.now),
            updated_at: crate::model::fmt_time(e.now),
            version: 1,
        };
        Ok((entry, rolled))
    }

    /// One entry by id or unique id prefix (archived pads included: an id is explicit).
    pub async fn get(&self, id: &str) -> Result<Entry> {
        let mut conn = self.readers().acquire().await?;
        let (seq, _) = resolve(&mut conn, "id", id).await?;
        Ok(load(&mut conn, seq).await?.into_entry())
    }

    /// Applies `patch`; with `if_version`, only if the entry is still at that version.
    /// Returns the entry before and after.
    pub async fn update(
        &self,
        id: &str,
        patch: Patch,
        if_version: Option<i64>,
        now: i64,
    ) -> Result<(Entry, Entry)> {
        let mut w = self.writer().await;
        let (seq, full_id) = resolve(&mut w.conn, "id", id).await?;
        let row = load(&mut w.conn, seq).await?;
        check_version(&full_id, row.version, if_version)?;
        let before = row.into_entry();
        let mut after = before.clone();

        if let Some(deps) = &patch.depends_on {
            let mut resolved = Vec::with_capacity(deps.len());
            for d in deps {
                let (_, dep) = resolve(&mut w.conn, "depends_on", d).await?;
                if dep == full_id {
                    return Err(Error::invalid(
                        "depends_on",
                        format!(
                            "entry {full_id} cannot depend on itself; remove it from depends_on."
                        ),
                    ));
                }
                resolved.push(dep);
            }
            if let Some(cycle) = find_cycle(&mut w.conn, &full_id, &resolved).await? {
                return Err(Error::invalid(
                    "depends_on",
                    format!("depends_on would make a cycle: {cycle}. Remove one of these links."),
                ));
            }
            after.depends_on = resolved;
        }
        if let Some(c) = patch.content {
            after.content = c;
        }
        if let Some(t) = patch.tags {
            after.tags = t;
        }
        if let Some(k) = patch.kind {
            after.kind = k;
        }
        if let Some(s) = patch.status {
            after.status = s;
        }
        if let Some(a) = patch.assignee {
            after.assignee = a;
        }
        if let Some(r) = patch.resume {
            after.resume = r;
        }
        if let Some(c) = patch.category {
            after.category = c;
        }
        if let Some(c) = patch.confidence {
            after.confidence = c;
        }
        if let Some(p) = patch.pinned {
            after.pinned = p;
        }
        let remind_ms = match patch.remind_at {
            Some(r) => {
                after.remind_at = r.map(crate::model::fmt_time);
                r
            }
            None => before
                .remind_at
                .as_deref()
                .and_then(|t| crate::model::parse_time("remind_at", t).ok()),
        };
        let meta_text = match patch.meta {
            Some(m) => {
                after.meta = m.as_deref().and_then(|m| serde_json::from_str(m).ok());
                m
            }
            None => after
                .meta
                .as_ref()
                .map(|m| serde_json::to_string(m).expect("json serializes")),
        };
        after.version = before.version + 1;
        after.updated_at = crate::model::fmt_time(now);

        let rev = w.take_rev();
        sqlx::query(
            "UPDATE entries SET content = ?, tags = ?, kind = ?, status = ?, assignee = ?, \
             resume = ?, category = ?, confidence = ?, pinned = ?, depends_on = ?, remind_at = ?, \
             meta = ?, updated_at = ?, version = version + 1, rev = ? WHERE seq = ?",
        )
        .bind(&after.content)
        .bind(serde_json::to_string(&after.tags).expect("strings serialize"))
        .bind(after.kind.as_str())
        .bind(after.status.map(Status::as_str))
        .bind(&after.assignee)
        .bind(&after.resume)
        .bind(after.category.map(Category::as_str))
        .bind(after.confidence)
        .bind(after.pinned)
        .bind(serde_json::to_string(&after.depends_on).expect("strings serialize"))
        .bind(remind_ms)
        .bind(meta_text)
        .bind(now)
        .bind(rev)
        .bind(seq)
        .execute(&mut w.conn)
        .await?;
        self.publish(rev);
        Ok((before, after))
    }

    /// Deletes one entry; with `if_version`, only if it is still at that version.
    pub async fn delete(&self, id: &str, if_version: Option<i64>) -> Result<Entry> {
        let mut w = self.writer().await;
        let (seq, full_id) = resolve(&mut w.conn, "id", id).await?;
        let row = load(&mut w.conn, seq).await?;
        check_version(&full_id, row.version, if_version)?;
        sqlx::query("DELETE FROM entries WHERE seq = ?")
            .bind(seq)
            .execute(&mut w.conn)
            .await?;
        Ok(row.into_entry())
    }

    /// Entries matching `filter`, newest first, `limit` at a time. The cursor is
    /// keyed on the insertion order, so pages never repeat or skip an entry even
    /// while others write.
    pub async fn list(
        &self,
        filter: &EntryFilter,
        limit: u32,
        cursor: Option<i64>,
    ) -> Result<Page> {
        let mut q = QueryBuilder::<Sqlite>::new(format!(
            "SELECT {ENTRY_COLUMNS} FROM entries e JOIN pads p ON p.name = e.pad WHERE 1"
        ));
        filter.push_sql(&mut q);
        if let Some(c) = cursor {
            q.push(" AND e.seq < ").push_bind(c);
        }
        q.push(" ORDER BY e.seq DESC LIMIT ")
            .push_bind(limit as i64 + 1);
        let mut rows: Vec<EntryRow> = q.build_query_as().fetch_all(self.readers()).await?;
        let next_cursor = if rows.len() > limit as usize {
            rows.truncate(limit as usize);
            rows.last().map(|r| r.seq.to_string())
        } else {
            None
        };
        Ok(Page {
            entries: rows.into_iter().map(EntryRow::into_entry).collect(),
            next_cursor,
        })
    }
}

fn check_version(id: &str, actual: i64, expected: Option<i64>) -> Result<()> {
    match expected {
        Some(v) if v != actual => Err(Error::Conflict {
            message: format!(
                "entry {id} is at version {actual}, not {v}: someone changed it since you read it. Fetch it again (entry.get), merge your change, and retry with if_version {actual}."
            ),
            expected: Some(v),
            actual: Some(actual),
        }),
        _ => Ok(()),
    }
}

/// Resolves an id or unique id prefix to `(seq, full id)`.
pub(crate) async fn resolve(
    conn: &mut SqliteConnection,
    field: &'static str,
    id: &str,
) -> Result<(i64, String)> {
    let id = id.trim().to_lowercase();
    if !is_id_prefix(&id) {
        return Err(Error::invalid(
            field,
            format!("'{id}' is not an entry id; ids are up to {ID_LEN} characters of 0-9 and a-z (without i, l, o, u), e.g. '01jd3k5q8x2mz'. A unique prefix is enough."),
        ));
    }
    let rows: Vec<(i64, String)> = if id.len() == ID_LEN {
        sqlx::query_as("SELECT seq, id FROM entries WHERE id = ?")
            .bind(&id)
            .fetch_all(&mut *conn)
            .await?
    } else {
        sqlx::query_as("SELECT seq, id FROM entries WHERE id >= ? AND id < ? ORDER BY id LIMIT 3")
            .bind(&id)
            .bind(format!("{id}~"))
            .fetch_all(&mut *conn)
            .await?
    };
    match rows.len() {
        0 => Err(Error::NotFound {
            field,
            message: format!("no entry with id '{id}'. It may have been deleted or purged; list the pad (entry.list) to find current ids."),
        }),
        1 => Ok(rows.into_iter().next().expect("one row")),
        _ => Err(Error::invalid(
            field,
            format!(
                "id prefix '{id}' matches several entries ({}, …); give more characters.",
                rows.iter().map(|r| r.1.as_str()).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

async fn load(conn: &mut SqliteConnection, seq: i64) -> Result<EntryRow> {
    Ok(sqlx::query_as::<_, EntryRow>(&format!(
        "SELECT {ENTRY_COLUMNS} FROM entries e WHERE e.seq = ?"
    ))
    .bind(seq)
    .fetch_one(&mut *conn)
    .await?)
}

/// If `id` depending on `deps` would close a loop, the loop as "a → b → a".
async fn find_cycle(
    conn: &mut SqliteConnection,
    id: &str,
    deps: &[String],
) -> Result<Option<String>> {
    if deps.is_empty() {
        return Ok(None);
    }
    let path: Option<String> = sqlx::query_scalar(
        "WITH RECURSIVE reach(id, path) AS ( \
           SELECT value, ?1 || ' → ' || value FROM json_each(?2) \
           UNION \
           SELECT j.value, reach.path || ' → ' || j.value \
           FROM reach JOIN entries e ON e.id = reach.id, json_each(e.depends_on) j \
           WHERE reach.id <> ?1 AND length(reach.path) < 4000) \
         SELECT path FROM reach WHERE id = ?1 LIMIT 1",
    )
    .bind(id)
    .bind(serde_json::to_string(deps).expect("strings serialize"))
    .fetch_optional(&mut *conn)
    .await?;
    Ok(path)
}

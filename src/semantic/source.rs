//! What the embedding worker and the in-memory index need from a store: one
//! boundary, two implementations (`vectors.db` beside SQLite,
//! `src/store/vector_source.rs`; the `vectors` table of the shared
//! PostgreSQL database, `src/pg/vectors.rs`).
//!
//! Either way the stored vectors are the truth and the index follows them:
//! every write of a vector or a tombstone takes the next `n`, rows become
//! visible in `n` order, and an index that has applied every row up to `n`
//! catches up by reading the rows after it.

use super::splade::Terms;
use super::vector::VectorRow;
use crate::error::Result;

/// A note as the encoders read it.
#[derive(Clone, Copy, Debug)]
pub struct Note<'a> {
    pub author: &'a str,
    pub content: &'a str,
}

/// What the encoders made of a note: its vector (the author and the
/// content, `vector::embedded_text`) and its learned sparse terms (the
/// content alone; empty when the sparse model is not loaded).
#[derive(Clone, Debug)]
pub struct Encoded {
    pub vector: Vec<f32>,
    pub terms: Terms,
}

/// Encodes a batch of notes: one result per note, in order (`None`: this
/// note cannot be embedded and is left out of meaning search).
pub type Embed<'a> = dyn FnMut(&[Note<'_>]) -> Vec<Option<Encoded>> + 'a;

pub trait VectorSource: Send + Sync + 'static {
    /// Makes sure the stored vectors come from `model`; if they do not (or
    /// there are none yet), forgets them so everything is embedded again.
    /// Returns whether it did.
    fn use_model(&self, model: &str) -> Result<bool>;
    /// Forgets every vector and queues every entry to be embedded again.
    fn clear(&self) -> Result<()>;
    /// Names the current contents; a new one after every clear.
    fn generation(&self) -> Result<String>;
    /// The highest `n` of a visible row (0 when empty): every row up to it
    /// can be read.
    fn last_n(&self) -> Result<i64>;
    /// A saved index that applied less than this cannot catch up (the
    /// tombstones it lacks are gone) and is rebuilt.
    fn floor(&self) -> Result<i64>;
    /// Rows written after `n` (vectors and tombstones), oldest first.
    fn since(&self, n: i64, limit: i64) -> Result<Vec<VectorRow>>;
    /// Live vectors with ids past `after`, in id order: a rebuild's pages.
    fn live_after(&self, after: i64, limit: i64) -> Result<Vec<(i64, Vec<f32>)>>;
    /// Live vectors.
    fn count(&self) -> Result<i64>;
    /// Drops tombstones up to `n`, which a saved index has applied.
    fn prune_tombstones(&self, upto_n: i64) -> Result<usize>;
    /// Takes the next batch of new, edited or deleted entries (at most
    /// `limit`), encodes the notes with `embed` and stores the vectors with
    /// their sparse terms, and the tombstones (a deleted entry's terms go). `None`: nothing to do. `Some(n)`: `n` texts embedded.
    fn embed_next(&self, limit: usize, embed: &mut Embed<'_>) -> Result<Option<usize>>;
    /// Changes whenever there may be something new to embed; `None` when the
    /// store cannot tell (other engines write too), so the worker looks on
    /// every poll.
    fn write_epoch(&self) -> Option<u64>;
    /// This engine's own writes, counted: what the encoders yield to
    /// (`pace.rs`). They share this machine's cores with this engine's
    /// writers, not with another engine's, so on PostgreSQL the count is
    /// the write transactions this engine began, where `write_epoch`
    /// cannot tell (other engines write too).
    fn own_writes(&self) -> u64;
    /// How many notes wait to be encoded, counted up to one past
    /// `SETTLE_MAX_BACKLOG` (a flood: more than a search waits for)
    /// without taking the store's writer; `None` when the count failed.
    fn backlog(&self) -> Option<i64>;
    /// What the index reflects once it has applied every row up to
    /// `applied`, as read-your-writes waits for it.
    fn marks(&self, applied: i64) -> (i64, i64);
}
